//! Windows: a child context keeping the special messages and a suffix of the rest,
//! by count (`sequence`) or by token budget (`tokens`).

mod sequence;
mod specials;
mod tokens;
