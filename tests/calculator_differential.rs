//! Differential test: generated expressions (seeded, within the calculator grammar) are evaluated
//! by our calculator and by CPython in one `python3` subprocess; results and error kinds must match.
//!
//! CPython evaluates each node with its own operators; the only thing the Python side adds is the
//! calculator's contract applied to every intermediate value: an integer of more than 1000 digits
//! is "too large", a float inf/nan is "overflow", a complex number is "complex". Two shortcuts
//! keep CPython from building astronomically large integers first: an integer power whose result
//! provably exceeds the limit, and `round(int, -k)` with k beyond the limit (which is 0).
//!
//! `CALC_DIFF_CASES` (default 4000) and `CALC_DIFF_SEED` change the run.

use std::io::Write;
use std::process::{Command, Stdio};

use agentmaker::builtins::calculator::{evaluate, CalcError, Limits, MathError};

const PYTHON_SIDE: &str = r#"
import ast, json, math, operator, sys
sys.set_int_max_str_digits(0)
MAX_DIGITS = 1000

def round_(x, *n):
    # round(int, -k) builds 10**k first; for k beyond the digit limit the answer is 0 anyway.
    if n and type(x) is int and type(n[0]) is int and n[0] < -(MAX_DIGITS + 1):
        return 0
    return round(x, *n)

FUNCS = {"sqrt": math.sqrt, "abs": abs, "round": round_, "log": math.log, "sin": math.sin,
         "cos": math.cos, "tan": math.tan, "exp": math.exp, "floor": math.floor,
         "ceil": math.ceil, "min": min, "max": max}
CONSTS = {"pi": math.pi, "e": math.e}
OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
       ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
       ast.Pow: operator.pow}

class Bound(Exception):
    pass

def check(v):
    if isinstance(v, bool) or callable(v):
        return v
    if isinstance(v, complex):
        raise Bound("complex")
    if isinstance(v, float) and not math.isfinite(v):
        raise Bound("overflow")
    if isinstance(v, int) and v.bit_length() > 3300 and len(str(abs(v))) > MAX_DIGITS:
        raise Bound("too_large")
    return v

def ev(node):
    if isinstance(node, ast.Expression):
        return ev(node.body)
    if isinstance(node, ast.Constant):
        return check(node.value)
    if isinstance(node, ast.Name):
        if node.id in CONSTS:
            return CONSTS[node.id]
        return FUNCS[node.id]
    if isinstance(node, ast.UnaryOp):
        v = ev(node.operand)
        return check(-v if isinstance(node.op, ast.USub) else +v)
    if isinstance(node, ast.BinOp):
        a = ev(node.left)
        b = ev(node.right)
        if isinstance(node.op, ast.Pow) and type(a) is int and type(b) is int and b > 0 \
                and abs(a) > 1 and b * (abs(a).bit_length() - 1) > 3324:
            raise Bound("too_large")
        return check(OPS[type(node.op)](a, b))
    if isinstance(node, ast.Call):
        f = ev(node.func)
        args = [ev(a) for a in node.args]
        return check(f(*args))
    raise SyntaxError("unexpected node " + type(node).__name__)

out = []
for expr in json.load(sys.stdin):
    try:
        v = ev(ast.parse(expr, mode="eval"))
        out.append(["function"] if callable(v) else ["ok", repr(v)])
    except Bound as b:
        out.append([str(b)])
    except ZeroDivisionError:
        out.append(["div_zero"])
    except OverflowError:
        out.append(["overflow"])
    except ValueError as e:
        out.append(["domain" if "math domain" in str(e) else "value: " + str(e)])
    except TypeError:
        out.append(["type"])
json.dump(out, sys.stdout)
"#;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const INTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "7",
    "10",
    "12",
    "100",
    "255",
    "1000",
    "65536",
    "2147483648",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "12345678901234567890",
    "340282366920938463463374607431768211456",
    "0x1F",
    "0o17",
    "0b1011",
    "1_000_000",
];
const FLOATS: &[&str] = &[
    "0.0",
    "0.1",
    "0.2",
    "0.5",
    "1.5",
    "2.5",
    "-0.0",
    "3.14159",
    "1e-3",
    "1.5e10",
    "1e16",
    "1e22",
    "1e300",
    "1e-310",
    "2.675",
    ".5",
    "7.",
    "123456.789",
    "1e-5",
    "0.30000000000000004",
];
const UNARY_FUNCS: &[&str] = &[
    "sqrt", "abs", "sin", "cos", "tan", "exp", "floor", "ceil", "log", "round",
];
const OPS: &[&str] = &[
    " + ", " - ", " * ", " / ", " // ", " % ", " ** ", "+", "-", "*", "**",
];

fn leaf(rng: &mut Rng) -> String {
    match rng.below(10) {
        0..=4 => rng.pick(INTS).to_string(),
        5..=7 => rng.pick(FLOATS).to_string(),
        8 => (rng.next() % 100_000).to_string(),
        _ => {
            if rng.chance(50) {
                rng.pick(&["pi", "e"]).to_string()
            } else {
                format!("{:?}", f64::from_bits(rng.next() >> 2) % 1e6)
            }
        }
    }
}

fn operand(rng: &mut Rng, depth: usize) -> String {
    let mut s = String::new();
    for _ in 0..rng.below(3).saturating_sub(1) {
        s.push_str(rng.pick(&["-", "+", "- "]));
    }
    let body = if depth == 0 || rng.chance(45) {
        leaf(rng)
    } else {
        match rng.below(6) {
            0..=2 => format!("({})", expr(rng, depth - 1)),
            3 => {
                let f = rng.pick(UNARY_FUNCS);
                format!("{f}({})", expr(rng, depth - 1))
            }
            4 => {
                let f = rng.pick(&["round", "log", "min", "max"]);
                let second = if f == "round" && rng.chance(70) {
                    rng.pick(&["0", "1", "2", "3", "-1", "-2", "5", "-400", "400", "17"])
                        .to_string()
                } else {
                    expr(rng, depth - 1)
                };
                format!("{f}({}, {second})", expr(rng, depth - 1))
            }
            _ => format!(
                "max({}, {}, {})",
                expr(rng, depth - 1),
                expr(rng, depth - 1),
                leaf(rng)
            ),
        }
    };
    s.push_str(&body);
    s
}

fn expr(rng: &mut Rng, depth: usize) -> String {
    let n = 1 + rng.below(4);
    let mut s = operand(rng, depth);
    for _ in 1..n {
        s.push_str(rng.pick(OPS));
        s.push_str(&operand(rng, depth));
    }
    s
}

fn big_int(rng: &mut Rng) -> String {
    let max = if rng.chance(50) { 40 } else { 400 };
    let len = 1 + rng.below(max);
    let mut s = String::from(if rng.chance(30) { "-" } else { "" });
    s.push(char::from(b'1' + rng.below(9) as u8));
    for _ in 1..len {
        s.push(char::from(b'0' + rng.below(10) as u8));
    }
    s
}

fn any_float(rng: &mut Rng) -> String {
    if rng.chance(60) {
        // Human-sized decimals, many of them near rounding ties (x.xx5).
        let v = (rng.next() % 1_000_000_000) as f64 / 10f64.powi(rng.below(10) as i32);
        return format!("({}{v:?})", if rng.chance(30) { "-" } else { "" });
    }
    loop {
        let f = f64::from_bits(rng.next());
        if f.is_finite() {
            return format!("({f:?})");
        }
    }
}

/// Operations whose exact rounding is easy to get subtly wrong: big-int true division,
/// int/float mixing, `round(x, n)`, logs of huge ints, float `//` and `%`, and float repr.
fn focused(rng: &mut Rng) -> String {
    match rng.below(9) {
        0 => format!("{} / {}", big_int(rng), big_int(rng)),
        1 => format!(
            "{} // {} + {} % {}",
            big_int(rng),
            big_int(rng),
            big_int(rng),
            big_int(rng)
        ),
        2 => format!("{} * {}", big_int(rng), any_float(rng)),
        3 => format!("round({}, {})", any_float(rng), rng.below(40) as i64 - 20),
        4 => format!(
            "round({} / {}, {})",
            rng.next() % 100_000,
            1 + rng.next() % 1000,
            rng.below(8)
        ),
        5 => format!(
            "log({}) + log({}, {})",
            big_int(rng).trim_start_matches('-'),
            rng.next() % 10_000 + 1,
            2 + rng.below(20)
        ),
        6 => format!(
            "{} // {} + 0 * ({} % {})",
            any_float(rng),
            any_float(rng),
            any_float(rng),
            any_float(rng)
        ),
        7 => format!("{} % {}", any_float(rng), any_float(rng)),
        _ => format!("{} * 1", any_float(rng)),
    }
}

fn kind(r: &Result<agentmaker::builtins::calculator::Number, CalcError>) -> Vec<String> {
    match r {
        Ok(n) => vec!["ok".into(), n.render()],
        Err(CalcError::Math(m)) => vec![match m {
            MathError::DivisionByZero => "div_zero",
            MathError::Domain => "domain",
            MathError::Overflow => "overflow",
            MathError::TooLarge => "too_large",
            MathError::Complex => "complex",
            MathError::NotInteger => "type",
        }
        .into()],
        Err(CalcError::NotANumber(_)) => vec!["function".into()],
        Err(CalcError::NotCallable(_)) | Err(CalcError::Arity { .. }) => vec!["type".into()],
        Err(e) => vec![format!("unexpected: {e:?}")],
    }
}

#[test]
fn matches_cpython_on_generated_expressions() {
    let cases: usize = std::env::var("CALC_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let seed: u64 = std::env::var("CALC_DIFF_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_CA1C);
    let mut rng = Rng(seed | 1);
    let limits = Limits {
        max_len: 100_000,
        max_depth: 1000,
        max_nodes: 100_000,
    };
    // Mostly shallow expressions (which usually have a value), some deep ones (which exercise
    // precedence and error order).
    let exprs: Vec<String> = (0..cases)
        .map(|i| {
            if i % 5 == 4 {
                focused(&mut rng)
            } else {
                expr(&mut rng, [1, 1, 2, 3][i % 4])
            }
        })
        .collect();
    if let Ok(path) = std::env::var("CALC_DIFF_DUMP") {
        std::fs::write(path, serde_json::to_vec(&exprs).expect("serialize")).expect("dump");
    }

    let mut child = Command::new("python3")
        .args(["-c", PYTHON_SIDE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 must be on PATH for the differential test");
    let input = serde_json::to_vec(&exprs).expect("serialize");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&input)
        .expect("write to python3");
    let out = child.wait_with_output().expect("python3 output");
    assert!(out.status.success(), "python3 side failed");
    let python: Vec<Vec<String>> = serde_json::from_slice(&out.stdout).expect("python3 JSON");
    assert_eq!(python.len(), exprs.len());

    let mut mismatches = Vec::new();
    let mut ok_count = 0;
    for (e, want) in exprs.iter().zip(&python) {
        let got = kind(&evaluate(e, limits));
        if got[0] == "ok" {
            ok_count += 1;
        }
        if &got != want {
            mismatches.push(format!("{e}\n    python: {want:?}\n    ours:   {got:?}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ:\n{}",
        mismatches.len(),
        exprs.len(),
        mismatches[..mismatches.len().min(30)].join("\n")
    );
    // The generator must mostly produce values, not just errors, to be a meaningful comparison.
    assert!(
        ok_count * 2 > exprs.len(),
        "only {ok_count} of {} expressions had a value",
        exprs.len()
    );
}
