//! A small expression language over f64 for plan `[set]` and `[expected]` entries, so a
//! plan can say `delay_ms = "rtt / 2"` or `goodput = "1252*8 / (rtt/1000) * sqrt(1.5/p)"`
//! without a scripting engine. Numbers (`2`, `0.5`, `1e-3`), variables (axis names),
//! `+ - * /`, `^` (right-associative, binds tighter than unary minus: `-2^2 = -4`),
//! parentheses and the functions sqrt ln log10 exp min max abs floor ceil round.
//! Errors carry the 0-based byte position in the source text.
//!
//! The text comes from plan files, `--set` and Python callers, so parsing is bounded:
//! nesting (parentheses, signs, powers, function arguments) deeper than [`MAX_DEPTH`]
//! is an error rather than a stack overflow, tokens are read one at a time (an error
//! stops the scan there), and a run of `+ -` or `* /` is one node, so a long sum does
//! not deepen the tree that evaluation walks.

use quiclab_sim::excerpt;
use std::collections::{BTreeMap, BTreeSet};

/// How deeply an expression may nest: far beyond any formula, far below what overflows
/// a thread's stack (each level is a few parser frames, debug builds included).
pub const MAX_DEPTH: usize = 64;

/// What went wrong, and where (0-based byte offset into the expression).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("at column {}: {kind}", .pos + 1)]
pub struct ExprError {
    pub pos: usize,
    pub kind: ExprErrorKind,
}

/// The kinds of expression errors (names and numbers quoted as [`excerpt`] allows).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExprErrorKind {
    #[error("unexpected character `{0}`")]
    BadChar(char),
    #[error("bad number `{}`", excerpt(.0))]
    BadNumber(String),
    #[error("unexpected {}", excerpt(.0))]
    Unexpected(String),
    #[error("unknown function `{}`", excerpt(.0))]
    UnknownFunction(String),
    #[error("function `{name}` takes {expected} argument(s), got {got}")]
    Arity {
        name: String,
        expected: usize,
        got: usize,
    },
    #[error("unknown variable `{}`", excerpt(.0))]
    UnknownVariable(String),
    #[error("nested deeper than {MAX_DEPTH} levels (parentheses, signs, powers, calls)")]
    TooDeep,
}

fn err<T>(pos: usize, kind: ExprErrorKind) -> Result<T, ExprError> {
    Err(ExprError { pos, kind })
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Func {
    Sqrt,
    Ln,
    Log10,
    Exp,
    Min,
    Max,
    Abs,
    Floor,
    Ceil,
    Round,
}

impl Func {
    fn lookup(name: &str) -> Option<(Func, usize)> {
        Some(match name {
            "sqrt" => (Func::Sqrt, 1),
            "ln" => (Func::Ln, 1),
            "log10" => (Func::Log10, 1),
            "exp" => (Func::Exp, 1),
            "min" => (Func::Min, 2),
            "max" => (Func::Max, 2),
            "abs" => (Func::Abs, 1),
            "floor" => (Func::Floor, 1),
            "ceil" => (Func::Ceil, 1),
            "round" => (Func::Round, 1),
            _ => return None,
        })
    }

    fn apply(self, a: &[f64]) -> f64 {
        match self {
            Func::Sqrt => a[0].sqrt(),
            Func::Ln => a[0].ln(),
            Func::Log10 => a[0].log10(),
            Func::Exp => a[0].exp(),
            Func::Min => a[0].min(a[1]),
            Func::Max => a[0].max(a[1]),
            Func::Abs => a[0].abs(),
            Func::Floor => a[0].floor(),
            Func::Ceil => a[0].ceil(),
            Func::Round => a[0].round(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Num(f64),
    Var(String, usize),
    Neg(Box<Node>),
    /// `first op x op y ...`, applied left to right (a run of `+ -` or of `* /`).
    Chain(Box<Node>, Vec<(char, Node)>),
    Pow(Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    root: Node,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Op(char),
    LParen,
    RParen,
    Comma,
    End,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(n) => format!("number {n}"),
        Tok::Ident(s) => format!("name `{s}`"),
        Tok::Op(c) => format!("`{c}`"),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Comma => "`,`".into(),
        Tok::End => "end of expression".into(),
    }
}

/// The token starting at or after byte `i` of `src`: (token, its start, the byte after it).
fn lex_one(src: &str, mut i: usize) -> Result<(Tok, usize, usize), ExprError> {
    let b = src.as_bytes();
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    let Some(&c) = b.get(i) else {
        return Ok((Tok::End, src.len(), src.len()));
    };
    let c = c as char;
    if c.is_ascii_digit() || c == '.' {
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        // Exponent: e/E, optional sign, digits.
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            let mut j = i + 1;
            if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                j += 1;
            }
            if j < b.len() && b[j].is_ascii_digit() {
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                i = j;
            }
        }
        let text = &src[start..i];
        return match text.parse::<f64>() {
            Ok(v) => Ok((Tok::Num(v), start, i)),
            Err(_) => err(start, ExprErrorKind::BadNumber(text.into())),
        };
    }
    if c.is_ascii_alphabetic() || c == '_' {
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        return Ok((Tok::Ident(src[start..i].into()), start, i));
    }
    let t = match c {
        '+' | '-' | '*' | '/' | '^' => Tok::Op(c),
        '(' => Tok::LParen,
        ')' => Tok::RParen,
        ',' => Tok::Comma,
        _ => {
            let ch = src[i..].chars().next().unwrap_or('?');
            return err(i, ExprErrorKind::BadChar(ch));
        }
    };
    Ok((t, start, i + 1))
}

/// Recursive descent over tokens read one at a time; `depth` counts the nesting the
/// recursion is in (see [`MAX_DEPTH`]).
struct Parser<'a> {
    src: &'a str,
    tok: Tok,
    pos: usize,
    /// Where the token after `tok` starts.
    next_at: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Result<Parser<'a>, ExprError> {
        let (tok, pos, next_at) = lex_one(src, 0)?;
        Ok(Parser {
            src,
            tok,
            pos,
            next_at,
            depth: 0,
        })
    }
    fn peek(&self) -> &Tok {
        &self.tok
    }
    fn pos(&self) -> usize {
        self.pos
    }
    fn next(&mut self) -> Result<(), ExprError> {
        if self.tok != Tok::End {
            (self.tok, self.pos, self.next_at) = lex_one(self.src, self.next_at)?;
        }
        Ok(())
    }
    fn unexpected<T>(&self) -> Result<T, ExprError> {
        err(self.pos(), ExprErrorKind::Unexpected(describe(self.peek())))
    }
    fn expect(&mut self, t: Tok) -> Result<(), ExprError> {
        if *self.peek() == t {
            self.next()
        } else {
            self.unexpected()
        }
    }

    /// A run of operands joined by the operators `ops`, each operand parsed by `operand`.
    fn chain(
        &mut self,
        ops: [char; 2],
        operand: fn(&mut Self) -> Result<Node, ExprError>,
    ) -> Result<Node, ExprError> {
        let first = operand(self)?;
        let mut rest = Vec::new();
        while let Tok::Op(op) = *self.peek() {
            if !ops.contains(&op) {
                break;
            }
            self.next()?;
            rest.push((op, operand(self)?));
        }
        Ok(if rest.is_empty() {
            first
        } else {
            Node::Chain(Box::new(first), rest)
        })
    }

    fn sum(&mut self) -> Result<Node, ExprError> {
        self.chain(['+', '-'], Self::product)
    }

    fn product(&mut self) -> Result<Node, ExprError> {
        self.chain(['*', '/'], Self::unary)
    }

    /// Every recursion passes through here (parentheses and arguments via `sum`, signs
    /// directly, exponents via `power`), so this is where nesting is counted.
    fn unary(&mut self) -> Result<Node, ExprError> {
        if self.depth >= MAX_DEPTH {
            return err(self.pos(), ExprErrorKind::TooDeep);
        }
        self.depth += 1;
        let node = match self.peek() {
            Tok::Op('-') => {
                self.next()?;
                self.unary().map(|n| Node::Neg(Box::new(n)))
            }
            Tok::Op('+') => {
                self.next()?;
                self.unary()
            }
            _ => self.power(),
        };
        self.depth -= 1;
        node
    }

    fn power(&mut self) -> Result<Node, ExprError> {
        let base = self.atom()?;
        if *self.peek() == Tok::Op('^') {
            self.next()?;
            // Right-associative; the exponent may itself be negated (2^-1).
            let exp = self.unary()?;
            return Ok(Node::Pow(Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Node, ExprError> {
        let (tok, pos) = (self.peek().clone(), self.pos());
        match tok {
            Tok::Num(v) => {
                self.next()?;
                Ok(Node::Num(v))
            }
            Tok::LParen => {
                self.next()?;
                let e = self.sum()?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            Tok::Ident(name) => {
                self.next()?;
                if *self.peek() != Tok::LParen {
                    return Ok(Node::Var(name, pos));
                }
                let Some((f, arity)) = Func::lookup(&name) else {
                    return err(pos, ExprErrorKind::UnknownFunction(name));
                };
                self.next()?;
                let mut args = Vec::new();
                if *self.peek() != Tok::RParen {
                    loop {
                        args.push(self.sum()?);
                        if *self.peek() == Tok::Comma {
                            self.next()?;
                        } else {
                            break;
                        }
                    }
                }
                self.expect(Tok::RParen)?;
                if args.len() != arity {
                    return err(
                        pos,
                        ExprErrorKind::Arity {
                            name,
                            expected: arity,
                            got: args.len(),
                        },
                    );
                }
                Ok(Node::Call(f, args))
            }
            _ => self.unexpected(),
        }
    }
}

impl Expr {
    /// Parses an expression.
    pub fn parse(src: &str) -> Result<Expr, ExprError> {
        let mut p = Parser::new(src)?;
        let root = p.sum()?;
        if *p.peek() != Tok::End {
            return p.unexpected();
        }
        Ok(Expr { root })
    }

    /// If the expression is a single variable, its name (a text axis can only be used so).
    pub fn as_variable(&self) -> Option<&str> {
        match &self.root {
            Node::Var(name, _) => Some(name),
            _ => None,
        }
    }

    /// The variables it reads, with the position of their first use.
    pub fn variables(&self) -> BTreeMap<String, usize> {
        fn walk(n: &Node, out: &mut BTreeMap<String, usize>) {
            match n {
                Node::Num(_) => {}
                Node::Var(name, pos) => {
                    out.entry(name.clone()).or_insert(*pos);
                }
                Node::Neg(a) => walk(a, out),
                Node::Chain(first, rest) => {
                    walk(first, out);
                    rest.iter().for_each(|(_, a)| walk(a, out));
                }
                Node::Pow(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Node::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.root, &mut out);
        out
    }

    /// Checks that every variable is one of `known` (at plan load, before any run).
    pub fn check_variables(&self, known: &BTreeSet<String>) -> Result<(), ExprError> {
        match self
            .variables()
            .into_iter()
            .find(|(v, _)| !known.contains(v))
        {
            Some((v, pos)) => err(pos, ExprErrorKind::UnknownVariable(v)),
            None => Ok(()),
        }
    }

    /// Evaluates with the given variable values. IEEE semantics: 1/0 is inf, sqrt(-1)
    /// is NaN; callers decide whether a non-finite result is acceptable.
    pub fn eval(&self, vars: &BTreeMap<String, f64>) -> Result<f64, ExprError> {
        fn ev(n: &Node, vars: &BTreeMap<String, f64>) -> Result<f64, ExprError> {
            Ok(match n {
                Node::Num(v) => *v,
                Node::Var(name, pos) => match vars.get(name) {
                    Some(v) => *v,
                    None => return err(*pos, ExprErrorKind::UnknownVariable(name.clone())),
                },
                Node::Neg(a) => -ev(a, vars)?,
                Node::Chain(first, rest) => {
                    let mut x = ev(first, vars)?;
                    for (op, a) in rest {
                        let y = ev(a, vars)?;
                        x = match op {
                            '+' => x + y,
                            '-' => x - y,
                            '*' => x * y,
                            _ => x / y,
                        };
                    }
                    x
                }
                Node::Pow(a, b) => ev(a, vars)?.powf(ev(b, vars)?),
                Node::Call(f, args) => {
                    let vals = args
                        .iter()
                        .map(|a| ev(a, vars))
                        .collect::<Result<Vec<_>, _>>()?;
                    f.apply(&vals)
                }
            })
        }
        ev(&self.root, vars)
    }
}

/// Parses and evaluates in one step.
pub fn eval(src: &str, vars: &BTreeMap<String, f64>) -> Result<f64, ExprError> {
    Expr::parse(src)?.eval(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(src: &str) -> f64 {
        let vars = BTreeMap::from([("rtt".to_string(), 20.0), ("p".to_string(), 0.01)]);
        eval(src, &vars).unwrap()
    }

    #[test]
    fn arithmetic_and_precedence() {
        assert_eq!(e("1 + 2 * 3"), 7.0);
        assert_eq!(e("(1 + 2) * 3"), 9.0);
        assert_eq!(e("10 - 4 - 3"), 3.0);
        assert_eq!(e("8 / 4 / 2"), 1.0);
        assert_eq!(e("2 ^ 3 ^ 2"), 512.0);
        assert_eq!(e("-2 ^ 2"), -4.0);
        assert_eq!(e("2 ^ -1"), 0.5);
        assert_eq!(e("--3"), 3.0);
        assert_eq!(e("1e-3 * 1E3"), 1.0);
        assert_eq!(e("2.5e+1"), 25.0);
        assert_eq!(e(".5"), 0.5);
    }

    #[test]
    fn variables_and_functions() {
        assert_eq!(e("rtt / 2"), 10.0);
        assert!((e("sqrt(1.5 / p)") - 150f64.sqrt()).abs() < 1e-12);
        assert_eq!(e("max(rtt, 30) + min(1, 2)"), 31.0);
        assert_eq!(e("abs(-3) + floor(2.7) + ceil(2.2) + round(2.5)"), 11.0);
        assert!((e("ln(exp(2))") - 2.0).abs() < 1e-12);
        assert_eq!(e("log10(1000)"), 3.0);
    }

    #[test]
    fn errors_have_positions() {
        let none = BTreeMap::new();
        let x = eval("1 + foo", &none).unwrap_err();
        assert_eq!(x.pos, 4);
        assert_eq!(x.kind, ExprErrorKind::UnknownVariable("foo".into()));
        assert_eq!(eval("1 +", &none).unwrap_err().pos, 3);
        assert_eq!(eval("(1", &none).unwrap_err().pos, 2);
        assert_eq!(eval("1 $ 2", &none).unwrap_err().pos, 2);
        assert_eq!(eval("2 3", &none).unwrap_err().pos, 2);
        assert!(matches!(
            eval("nope(1)", &none).unwrap_err().kind,
            ExprErrorKind::UnknownFunction(_)
        ));
        assert!(matches!(
            eval("min(1)", &none).unwrap_err().kind,
            ExprErrorKind::Arity { .. }
        ));
        assert!(eval("1..2", &none).is_err());
        assert!(eval("", &none).is_err());
        let msg = eval("1 + foo", &none).unwrap_err().to_string();
        assert_eq!(msg, "at column 5: unknown variable `foo`");
    }

    /// Nesting `depth` deep of each kind that recurses: parentheses, signs, powers and
    /// function arguments.
    fn nested(depth: usize) -> [String; 4] {
        [
            format!("{}10{}", "(".repeat(depth), ")".repeat(depth)),
            format!("{}10", "-".repeat(depth)),
            format!("{}2", "1^".repeat(depth)),
            format!("{}10{}", "abs(".repeat(depth), ")".repeat(depth)),
        ]
    }

    #[test]
    fn nesting_is_bounded() {
        let none = BTreeMap::new();
        for src in nested(MAX_DEPTH - 1) {
            assert!(eval(&src, &none).is_ok(), "{src}");
        }
        for depth in [MAX_DEPTH, 10_000, 1_000_000] {
            // The error is at the first level too many: the 65th `(`, `-`, `1^`, `abs(`.
            for (src, pos) in nested(depth).iter().zip([1, 1, 2, 4]) {
                let e = Expr::parse(src).unwrap_err();
                assert_eq!(e.kind, ExprErrorKind::TooDeep, "{}", &src[..20]);
                assert_eq!(e.pos, MAX_DEPTH * pos, "{}", &src[..20]);
            }
        }
        let e = Expr::parse(&nested(10_000)[0]).unwrap_err();
        assert_eq!(e.pos, MAX_DEPTH, "the first `(` too many");
        assert_eq!(
            e.to_string(),
            "at column 65: nested deeper than 64 levels (parentheses, signs, powers, calls)"
        );
    }

    #[test]
    fn the_limit_is_far_below_a_small_stack() {
        // A thread with 256 KiB of stack (a Dask or Python worker may have little) parses
        // and evaluates the deepest accepted expressions of each kind.
        let ok = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                nested(MAX_DEPTH - 1)
                    .iter()
                    .all(|src| eval(src, &BTreeMap::new()).is_ok())
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(ok);
    }

    #[test]
    fn long_runs_do_not_nest() {
        // A million terms is one chain, not a tree a million deep: it parses, evaluates
        // left to right and drops without deep recursion.
        let none = BTreeMap::new();
        let sum = vec!["1"; 1_000_000].join(" + ");
        assert_eq!(eval(&sum, &none), Ok(1e6));
        let product = format!("1{}", " * 2 / 2".repeat(500_000));
        assert_eq!(eval(&product, &none), Ok(1.0));
        assert_eq!(e("100 - 10 - 1 + 1000"), 1089.0);
        assert_eq!(e("64 / 4 / 2 * 3"), 24.0);
    }

    #[test]
    fn names_in_errors_are_bounded() {
        let name = "x".repeat(1 << 20);
        let msg = eval(&format!("1 + {name}"), &BTreeMap::new())
            .unwrap_err()
            .to_string();
        assert!(msg.len() < 300, "{}", msg.len());
        assert!(msg.contains("…[1048576 chars]…"), "{msg}");
    }

    #[test]
    fn variables_listed_and_checked() {
        let x = Expr::parse("a * sqrt(b) + a").unwrap();
        assert_eq!(
            x.variables().keys().cloned().collect::<Vec<_>>(),
            vec!["a", "b"]
        );
        let known = BTreeSet::from(["a".to_string()]);
        assert_eq!(x.check_variables(&known).unwrap_err().pos, 9);
        assert_eq!(Expr::parse(" cc ").unwrap().as_variable(), Some("cc"));
        assert_eq!(Expr::parse("cc + 1").unwrap().as_variable(), None);
    }
}
