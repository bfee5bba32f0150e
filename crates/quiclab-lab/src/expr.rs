//! A small expression language over f64 for plan `[set]` and `[expected]` entries, so a
//! plan can say `delay_ms = "rtt / 2"` or `goodput = "1252*8 / (rtt/1000) * sqrt(1.5/p)"`
//! without a scripting engine. Numbers (`2`, `0.5`, `1e-3`), variables (axis names),
//! `+ - * /`, `^` (right-associative, binds tighter than unary minus: `-2^2 = -4`),
//! parentheses and the functions sqrt ln log10 exp min max abs floor ceil round.
//! Errors carry the 0-based byte position in the source text.

use std::collections::{BTreeMap, BTreeSet};

/// What went wrong, and where (0-based byte offset into the expression).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("at column {}: {kind}", .pos + 1)]
pub struct ExprError {
    pub pos: usize,
    pub kind: ExprErrorKind,
}

/// The kinds of expression errors.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExprErrorKind {
    #[error("unexpected character `{0}`")]
    BadChar(char),
    #[error("bad number `{0}`")]
    BadNumber(String),
    #[error("unexpected {0}")]
    Unexpected(String),
    #[error("unknown function `{0}`")]
    UnknownFunction(String),
    #[error("function `{name}` takes {expected} argument(s), got {got}")]
    Arity {
        name: String,
        expected: usize,
        got: usize,
    },
    #[error("unknown variable `{0}`")]
    UnknownVariable(String),
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
    Bin(char, Box<Node>, Box<Node>),
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

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
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
            match text.parse::<f64>() {
                Ok(v) => out.push((Tok::Num(v), start)),
                Err(_) => return err(start, ExprErrorKind::BadNumber(text.into())),
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(src[start..i].into()), start));
        } else {
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
            out.push((t, i));
            i += 1;
        }
    }
    out.push((Tok::End, src.len()));
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    i: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }
    fn pos(&self) -> usize {
        self.toks[self.i].1
    }
    fn next(&mut self) -> (Tok, usize) {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }
    fn unexpected<T>(&self) -> Result<T, ExprError> {
        err(self.pos(), ExprErrorKind::Unexpected(describe(self.peek())))
    }
    fn expect(&mut self, t: Tok) -> Result<(), ExprError> {
        if *self.peek() == t {
            self.next();
            Ok(())
        } else {
            self.unexpected()
        }
    }

    fn sum(&mut self) -> Result<Node, ExprError> {
        let mut lhs = self.product()?;
        while let Tok::Op(op @ ('+' | '-')) = *self.peek() {
            self.next();
            let rhs = self.product()?;
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn product(&mut self) -> Result<Node, ExprError> {
        let mut lhs = self.unary()?;
        while let Tok::Op(op @ ('*' | '/')) = *self.peek() {
            self.next();
            let rhs = self.unary()?;
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        match self.peek() {
            Tok::Op('-') => {
                self.next();
                Ok(Node::Neg(Box::new(self.unary()?)))
            }
            Tok::Op('+') => {
                self.next();
                self.unary()
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<Node, ExprError> {
        let base = self.atom()?;
        if *self.peek() == Tok::Op('^') {
            self.next();
            // Right-associative; the exponent may itself be negated (2^-1).
            let exp = self.unary()?;
            return Ok(Node::Bin('^', Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Node, ExprError> {
        let (tok, pos) = (self.peek().clone(), self.pos());
        match tok {
            Tok::Num(v) => {
                self.next();
                Ok(Node::Num(v))
            }
            Tok::LParen => {
                self.next();
                let e = self.sum()?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            Tok::Ident(name) => {
                self.next();
                if *self.peek() != Tok::LParen {
                    return Ok(Node::Var(name, pos));
                }
                let Some((f, arity)) = Func::lookup(&name) else {
                    return err(pos, ExprErrorKind::UnknownFunction(name));
                };
                self.next();
                let mut args = Vec::new();
                if *self.peek() != Tok::RParen {
                    loop {
                        args.push(self.sum()?);
                        if *self.peek() == Tok::Comma {
                            self.next();
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
        let mut p = Parser {
            toks: lex(src)?,
            i: 0,
        };
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
                Node::Bin(_, a, b) => {
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
                Node::Bin(op, a, b) => {
                    let (x, y) = (ev(a, vars)?, ev(b, vars)?);
                    match op {
                        '+' => x + y,
                        '-' => x - y,
                        '*' => x * y,
                        '/' => x / y,
                        _ => x.powf(y),
                    }
                }
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
