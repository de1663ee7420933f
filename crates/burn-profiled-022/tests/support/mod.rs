pub mod mlp;
