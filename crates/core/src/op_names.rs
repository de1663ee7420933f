//! Names for what fusion runs, alike in every edition: an op from its IR (`add`, `exp`,
//! `matmul`), a fused block from its kind and ops (`fused elementwise[add, mul, exp]`).

use std::fmt::{Debug, Write};

/// At most this many op names in a block's label; more are counted (`+7`).
const LABEL_OPS: usize = 6;

/// The op's name, from the innermost variant of its IR (burn-ir's `OperationIr`, any version):
/// `NumericFloat(_, AddScalar(..))` is `add_scalar`. burn-fusion's own naming is private; the
/// IR's `Debug` has the variants.
pub fn op_name(operation: &impl Debug) -> String {
    innermost_variant(&debug_up_to(operation, &['{']))
        .map(snake_case)
        .unwrap_or_else(|| "op".to_owned())
}

/// The name Burn 0.21's op table gives the backend op an IR op stands for: `op_name` with the
/// tensor kind of its outermost variant (`NumericFloat(_, AddScalar(..))` is
/// `float_add_scalar`, `Int(Argmax(..))` is `int_argmax`; module ops as they are): how a fused
/// block's op is matched to the same op of an unfused run.
pub fn table_name(operation: &impl Debug) -> String {
    table_name_of(
        &debug_up_to(operation, &['(', ' ', '{']),
        op_name(operation),
    )
}

/// What `Debug` writes of `value` up to the first of `stops`: the writing stops there, so a
/// large IR is not formatted whole.
fn debug_up_to(value: &impl Debug, stops: &[char]) -> String {
    struct UpTo<'a>(String, &'a [char]);
    impl Write for UpTo<'_> {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            match text.find(self.1) {
                Some(end) => {
                    self.0.push_str(&text[..end]);
                    Err(std::fmt::Error)
                }
                None => {
                    self.0.push_str(text);
                    Ok(())
                }
            }
        }
    }
    let mut head = UpTo(String::new(), stops);
    let _ = write!(head, "{value:?}");
    head.0
}

fn table_name_of(outer: &str, name: String) -> String {
    match outer {
        "BaseFloat" | "NumericFloat" | "Float" => format!("float_{name}"),
        "BaseInt" | "NumericInt" | "Int" => format!("int_{name}"),
        "BaseBool" | "Bool" => format!("bool_{name}"),
        _ => name,
    }
}

/// The last identifier followed by `(` in `head` (`NumericFloat(F32, Add(BinaryOpIr `).
fn innermost_variant(head: &str) -> Option<&str> {
    let mut found = None;
    let mut start = None;
    for (at, c) in head.char_indices() {
        if c.is_ascii_alphanumeric() || c == '_' {
            start.get_or_insert(at);
            continue;
        }
        if let Some(begin) = start.take()
            && c == '('
        {
            found = Some(&head[begin..at]);
        }
    }
    found
}

/// `MaxPool2dWithIndices` -> `max_pool2d_with_indices`.
fn snake_case(name: &str) -> String {
    let mut snake = String::with_capacity(name.len() + 4);
    let chars: Vec<char> = name.chars().collect();
    for (at, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let previous = at.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(at + 1);
            // A word starts after a lower-case letter or digit (`Conv2dX`), or where an upper-case
            // run ends (`XBackward`: the `B`).
            let starts_word = previous.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(char::is_ascii_lowercase))
            });
            if starts_word {
                snake.push('_');
            }
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    snake
}

/// `fused <kind>[<ops>]`, with at most six op names (`LABEL_OPS`).
pub fn block_label(kind: &str, ops: &[&str]) -> String {
    let mut label = format!("fused {kind}[");
    let shown = if ops.len() > LABEL_OPS {
        LABEL_OPS - 1
    } else {
        ops.len()
    };
    label.push_str(&ops[..shown].join(", "));
    if shown < ops.len() {
        let _ = write!(label, ", +{}", ops.len() - shown);
    }
    label.push(']');
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_variant_names_the_op() {
        assert_eq!(
            innermost_variant("NumericFloat(F32, AddScalar(ScalarOpIr "),
            Some("AddScalar")
        );
        assert_eq!(innermost_variant("Drop(TensorIr "), Some("Drop"));
        assert_eq!(innermost_variant("Float(F32, Exp(UnaryOpIr "), Some("Exp"));
        assert_eq!(innermost_variant("nothing here"), None);
    }

    #[test]
    fn the_outermost_variant_gives_the_op_tables_kind_prefix() {
        #[derive(Debug)]
        #[allow(dead_code)]
        enum Ir {
            NumericFloat(u8, Inner),
            BaseInt(Inner),
            Module(Inner),
        }
        #[derive(Debug)]
        #[allow(dead_code)]
        enum Inner {
            AddScalar(u8),
            Reshape(u8),
            Conv2d(u8),
        }
        assert_eq!(
            table_name(&Ir::NumericFloat(0, Inner::AddScalar(1))),
            "float_add_scalar"
        );
        assert_eq!(table_name(&Ir::BaseInt(Inner::Reshape(1))), "int_reshape");
        assert_eq!(table_name(&Ir::Module(Inner::Conv2d(1))), "conv2d");
        assert_eq!(table_name_of("Bool", "not".into()), "bool_not");
    }

    #[test]
    fn variant_names_become_burn_style_snake_case() {
        assert_eq!(snake_case("AddScalar"), "add_scalar");
        assert_eq!(snake_case("Conv2d"), "conv2d");
        assert_eq!(
            snake_case("MaxPool2dWithIndices"),
            "max_pool2d_with_indices"
        );
        assert_eq!(snake_case("Exp"), "exp");
        assert_eq!(
            snake_case("Conv2dXBackward"),
            "conv2d_x_backward",
            "as Burn 0.21 names the op"
        );
        assert_eq!(
            snake_case("ConvTranspose3dWeightBackward"),
            "conv_transpose3d_weight_backward"
        );
    }

    #[test]
    fn a_long_block_label_counts_the_ops_it_does_not_name() {
        assert_eq!(
            block_label("elementwise", &["add", "mul", "exp"]),
            "fused elementwise[add, mul, exp]"
        );
        let ops = ["a", "b", "c", "d", "e", "f", "g", "h"];
        assert_eq!(
            block_label("elementwise", &ops),
            "fused elementwise[a, b, c, d, e, +3]"
        );
        assert_eq!(
            block_label("matmul", &ops[..6]),
            "fused matmul[a, b, c, d, e, f]"
        );
    }
}
