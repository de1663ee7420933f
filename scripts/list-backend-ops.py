#!/usr/bin/env python3
"""Print Burn's backend op signatures in the syntax of src/backend/table.rs.

On a Burn upgrade, diff this output against the `forward!` tables to see which ops were added,
removed or changed:  python3 scripts/list-backend-ops.py [path/to/burn-backend-X.Y.Z]
Hand-written ops (quantize, q_matmul, bool_argwhere, tr_execute, has_ctc_loss_backward, and
every method of DistributedBackend, in src/backend/distributed.rs) are printed as comments.
"""
import glob, os, re, sys

TRAITS = [("FloatTensorOps", "ops/tensor.rs"), ("IntTensorOps", "ops/int_tensor.rs"),
          ("BoolTensorOps", "ops/bool_tensor.rs"), ("ModuleOps", "ops/modules/base.rs"),
          ("ActivationOps", "ops/activation.rs"), ("QTensorOps", "ops/qtensor.rs"),
          ("TransactionOps", "ops/transaction.rs"), ("DistributedBackend", "distributed/ops.rs")]
# Traits whose methods are all written out by hand.
HAND_WRITTEN_TRAITS = {"DistributedBackend"}
HAND_WRITTEN = {"quantize", "q_matmul", "bool_argwhere", "tr_execute", "has_ctc_loss_backward"}
DEVICE_OF = {"FloatTensor<B>": "float", "IntTensor<B>": "int", "BoolTensor<B>": "bool",
             "QuantizedTensor<B>": "q", "Vec<FloatTensor<B>>": "floats", "Vec<IntTensor<B>>": "ints",
             "Vec<BoolTensor<B>>": "bools", "Vec<QuantizedTensor<B>>": "qs", "Device<B>": "device"}


def closing(text, start, open_, close):
    """Index just past the bracket closing the one at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        depth += {open_: 1, close: -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise ValueError("unbalanced")


def split_args(args):
    parts, depth, cur = [], 0, ""
    for c in args:
        depth += {"<": 1, "(": 1, "[": 1, ">": -1, ")": -1, "]": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    return [p.strip() for p in parts + [cur] if p.strip()]


def methods(body):
    pos = 0
    pattern = re.compile(r"fn\s+(\w+)\s*\(")
    while (m := pattern.search(body, pos)):
        args_end = closing(body, m.end() - 1, "(", ")")
        end = args_end
        while body[end] not in ";{":
            end += 1
        ret = " ".join(body[args_end:end].split()).removeprefix("->").strip() or "()"
        args = [a.split(":", 1) for a in split_args(body[m.end():args_end - 1])]
        yield m.group(1), [(n.strip().lstrip("_"), t.strip()) for n, t in args], ret
        pos = closing(body, end, "{", "}") if body[end] == "{" else end + 1


def line(name, args, ret, hand_written=False):
    self_ = lambda t: re.sub(r"\bB\b", "Profiled<B>", t.replace("crate::tensor::", ""))
    device = next((f"{DEVICE_OF[t.lstrip('&')]}({n})" for n, t in args if t.lstrip("&") in DEVICE_OF), "none")
    attr = ""
    if ret.startswith("impl Future"):
        attr, ret = "#[read] ", re.sub(r"^impl Future<Output = (.*)> \+ Send$", r"\1", ret)
    elif re.search(r"(TensorPrimitive|WithIndices|Backward)<B>", ret):
        attr = "#[retag] "
    text = f"{attr}fn {name}({', '.join(f'{n}: {self_(t)}' for n, t in args)}) -> {self_(ret)} => {device};"
    return ("// hand-written: " if hand_written or name in HAND_WRITTEN else "") + text


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else glob.glob(
        os.path.expanduser("~/.cargo/registry/src/*/burn-backend-0.21.0"))[0]
    for trait, path in TRAITS:
        src = re.sub(r"//[^\n]*", "", open(os.path.join(root, "src/backend", path)).read())
        start = src.index("{", re.search(rf"pub trait {trait}\b", src).start())
        body = src[start + 1:closing(src, start, "{", "}") - 1]
        print(f"// {trait}")
        for name, args, ret in methods(body):
            print(line(name, args, ret, trait in HAND_WRITTEN_TRAITS))


if __name__ == "__main__":
    main()
