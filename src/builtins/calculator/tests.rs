use super::*;

fn calc() -> CalculatorTool {
    CalculatorTool::new(None).expect("default prompts")
}

fn ok(expr: &str) -> String {
    let r = calc().evaluate(expr);
    assert_eq!(
        r.status,
        crate::response::ToolStatus::Success,
        "{expr} -> {}",
        r.text
    );
    r.text
}

fn err(expr: &str) -> String {
    let r = calc().evaluate(expr);
    assert_eq!(
        r.status,
        crate::response::ToolStatus::Error,
        "{expr} -> {}",
        r.text
    );
    r.text
}

#[test]
fn python_results() {
    let cases: &[(&str, &str)] = &[
        ("(3 + 4) * 5", "35"),
        ("1+1", "2"),
        ("4/2", "2.0"),
        ("7/2", "3.5"),
        ("0.1+0.2", "0.30000000000000004"),
        ("1e16", "1e+16"),
        ("1e15", "1000000000000000.0"),
        ("2.0", "2.0"),
        ("0.0001", "0.0001"),
        ("0.00001", "1e-05"),
        ("1.5e300*1e5", "1.5000000000000001e+305"),
        ("5e-324", "5e-324"),
        ("-0.0", "-0.0"),
        ("0.0*-1", "-0.0"),
        ("-7//2", "-4"),
        ("7//-2", "-4"),
        ("-7%3", "2"),
        ("7%-3", "-2"),
        ("-7.5//2", "-4.0"),
        ("-7.5%2", "0.5"),
        ("7.5%-2", "-0.5"),
        ("-0.0%5", "0.0"),
        ("5.0%-5", "-0.0"),
        ("-2**2", "-4"),
        ("2**-1", "0.5"),
        ("2**3**2", "512"),
        ("(-2)**2", "4"),
        ("2**-2**2", "0.0625"),
        ("-2**-2", "-0.25"),
        ("(-8)**2.0", "64.0"),
        ("2**0.5", "1.4142135623730951"),
        ("0**0", "1"),
        ("0.0**0", "1.0"),
        ("(-1)**(10**900)", "1"),
        ("(-1)**(10**900+1)", "-1"),
        ("2**64", "18446744073709551616"),
        ("-2**63", "-9223372036854775808"),
        ("(-2**63)//-1", "9223372036854775808"),
        ("(-2**63)%-1", "0"),
        ("2**62*2", "9223372036854775808"),
        ("9223372036854775807+1", "9223372036854775808"),
        ("-9223372036854775808-1", "-9223372036854775809"),
        ("10**20//3", "33333333333333333333"),
        ("-(10**20)//3", "-33333333333333333334"),
        ("-(10**20)%3", "2"),
        ("10**20/3", "3.333333333333333e+19"),
        ("(2**53+1)/1", "9007199254740992.0"),
        ("(2**54+3)/2", "9007199254740994.0"),
        ("1/3", "0.3333333333333333"),
        ("2**1023*1.0", "8.98846567431158e+307"),
        ("1/10**400", "0.0"),
        ("10**320/10**319", "10.0"),
        ("sqrt(16)", "4.0"),
        ("sqrt(2)", "1.4142135623730951"),
        ("abs(-3)", "3"),
        ("abs(-3.5)", "3.5"),
        ("abs(-2**63)", "9223372036854775808"),
        ("round(2.5)", "2"),
        ("round(3.5)", "4"),
        ("round(-2.5)", "-2"),
        ("round(2.675, 2)", "2.67"),
        ("round(0.125, 2)", "0.12"),
        ("round(0.375, 2)", "0.38"),
        ("round(1234.5678, -2)", "1200.0"),
        ("round(-0.4, 0)", "-0.0"),
        ("round(1.5, 0)", "2.0"),
        ("round(5, 2)", "5"),
        ("round(1250, -2)", "1200"),
        ("round(1350, -2)", "1400"),
        ("round(-1250, -2)", "-1200"),
        ("round(7, -5000)", "0"),
        ("round(1e300)", "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160"),
        ("round(0.5)", "0"),
        ("round(1.23456789, 400)", "1.23456789"),
        ("round(123.456, -400)", "0.0"),
        ("log(e)", "1.0"),
        ("log(100, 10)", "2.0"),
        ("log(8, 2)", "3.0"),
        ("log(10**400)", "921.0340371976182"),
        ("sin(0)", "0.0"),
        ("cos(0)", "1.0"),
        ("sin(pi)", "1.2246467991473532e-16"),
        ("tan(0)", "0.0"),
        ("exp(1)", "2.718281828459045"),
        ("exp(-1000)", "0.0"),
        ("floor(-2.5)", "-3"),
        ("ceil(2.1)", "3"),
        ("floor(7)", "7"),
        ("min(3, 1.0, 1)", "1.0"),
        ("max(1, 1.0)", "1"),
        ("max(2**70, 1e21)", "1180591620717411303424"),
        ("min(2**70, 1.2e21)", "1180591620717411303424"),
        ("pi", "3.141592653589793"),
        ("e", "2.718281828459045"),
        ("1_000 + 0x10 + 0o10 + 0b10", "1026"),
        ("0x_ff", "255"),
        (".5 + 1.", "1.5"),
        ("1.e2", "100.0"),
        ("000", "0"),
        ("  1 +\t2  ", "3"),
        ("+-+-1", "1"),
        ("--1", "1"),
        ("sqrt(4,)", "2.0"),
        ("((((1))))", "1"),
        ("1e-320", "1e-320"),
        ("2**-1074", "5e-324"),
        ("2**-1075", "0.0"),
        ("3*2**-1076", "0.0"),
    ];
    let mut failures = Vec::new();
    for (expr, want) in cases {
        let r = calc().evaluate(expr);
        if r.text != *want || r.status != crate::response::ToolStatus::Success {
            failures.push(format!(
                "{expr}: want {want}, got {:?} {}",
                r.status, r.text
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn errors_have_reasons() {
    let cases: &[(&str, &str)] = &[
        ("", "Error: the expression must not be empty"),
        ("   ", "Error: the expression must not be empty"),
        ("1/0", "Error: division by zero"),
        ("1//0", "Error: division by zero"),
        ("1%0", "Error: division by zero"),
        ("1.0/0", "Error: division by zero"),
        ("1.5//0.0", "Error: division by zero"),
        ("1.5%0.0", "Error: division by zero"),
        ("0**-1", "Error: division by zero"),
        ("0.0**-1.5", "Error: division by zero"),
        ("log(1, 1)", "Error: division by zero"),
        ("sqrt(-1)", "Error: math domain error"),
        ("log(0)", "Error: math domain error"),
        ("log(-1)", "Error: math domain error"),
        ("log(2, -2)", "Error: math domain error"),
        ("9**9**9", "Error: integer result too large (over 1000 digits)"),
        ("10**1000", "Error: integer result too large (over 1000 digits)"),
        ("2**(2**70)", "Error: integer result too large (over 1000 digits)"),
        ("10**999*10", "Error: integer result too large (over 1000 digits)"),
        ("10.0**400", "Error: numeric result out of range (beyond the float range)"),
        ("1e308*10", "Error: numeric result out of range (beyond the float range)"),
        ("1e999", "Error: numeric result out of range (beyond the float range)"),
        ("10**400*1.0", "Error: numeric result out of range (beyond the float range)"),
        ("10**400/1", "Error: numeric result out of range (beyond the float range)"),
        ("exp(1000)", "Error: numeric result out of range (beyond the float range)"),
        ("sqrt(10**400)", "Error: numeric result out of range (beyond the float range)"),
        ("(-8)**(1/3)", "Error: the result would be a complex number (negative number raised to a fractional power)"),
        ("round(1.5, 1.0)", "Error: round() needs an integer number of digits"),
        ("foo(1)", "Error: unknown name 'foo'; available: pi, e, sqrt, abs, round, log, sin, cos, tan, exp, floor, ceil, min, max"),
        ("x + 1", "Error: unknown name 'x'; available: pi, e, sqrt, abs, round, log, sin, cos, tan, exp, floor, ceil, min, max"),
        ("pi(2)", "Error: 'pi' is not a function and cannot be called"),
        ("2(3)", "Error: a number is not a function and cannot be called"),
        ("sqrt(4)(2)", "Error: a number is not a function and cannot be called"),
        ("sqrt", "Error: 'sqrt' is a function; call it with arguments, e.g. sqrt(2)"),
        ("sqrt + 1", "Error: 'sqrt' is a function; call it with arguments, e.g. sqrt(2)"),
        ("sqrt(1, 2)", "Error: sqrt() takes exactly 1 argument (2 given)"),
        ("sqrt()", "Error: sqrt() takes exactly 1 argument (0 given)"),
        ("round(1, 2, 3)", "Error: round() takes 1 or 2 arguments (3 given)"),
        ("min(1)", "Error: min() takes at least 2 arguments (1 given)"),
        ("1 +", "Error: invalid syntax at column 4: the expression ends too early"),
        ("(1 + 2", "Error: invalid syntax at column 1: '(' was never closed"),
        ("1 + 2)", "Error: invalid syntax at column 6: unmatched ')'"),
        ("2 ^ 3", "Error: invalid syntax at column 3: unsupported operator '^' (use ** for powers)"),
        ("1 << 2", "Error: invalid syntax at column 3: unsupported operator '<<'"),
        ("1 == 1", "Error: invalid syntax at column 3: unsupported operator '=='"),
        ("__import__('os')", "Error: invalid syntax at column 12: unexpected character '\\''"),
        ("round(2.5, ndigits=1)", "Error: invalid syntax at column 12: keyword arguments are not supported"),
        ("3j", "Error: invalid syntax at column 1: complex numbers are not supported"),
        ("0123", "Error: invalid syntax at column 1: invalid number literal"),
        ("1__0", "Error: invalid syntax at column 2: invalid number literal"),
        ("1_", "Error: invalid syntax at column 2: invalid number literal"),
        ("2x", "Error: invalid syntax at column 1: invalid number literal"),
        ("1e", "Error: invalid syntax at column 1: invalid number literal"),
        ("0x", "Error: invalid syntax at column 1: invalid number literal"),
        ("0b2", "Error: invalid syntax at column 1: invalid number literal"),
        ("1 2", "Error: invalid syntax at column 3: unexpected number"),
        ("2 pi", "Error: invalid syntax at column 3: unexpected name 'pi'"),
        ("1.2.3", "Error: invalid syntax at column 4: unexpected number"),
        ("\u{0661}+1", "Error: invalid syntax at column 1: unexpected character '١'"),
        ("1 + \u{ff11}", "Error: invalid syntax at column 5: unexpected character '１'"),
        ("  )", "Error: invalid syntax at column 3: unmatched ')'"),
        ("*", "Error: invalid syntax at column 1: unexpected '*'"),
        ("(1 + )", "Error: invalid syntax at column 6: unexpected ')'"),
        ("sqrt(1, , 2)", "Error: invalid syntax at column 9: unexpected ','"),
        ("sqrt(1 2)", "Error: invalid syntax at column 8: unexpected number"),
        ("max(1, (2", "Error: invalid syntax at column 8: '(' was never closed"),
        ("nan", "Error: unknown name 'nan'; available: pi, e, sqrt, abs, round, log, sin, cos, tan, exp, floor, ceil, min, max"),
        ("inf - inf", "Error: unknown name 'inf'; available: pi, e, sqrt, abs, round, log, sin, cos, tan, exp, floor, ceil, min, max"),
        ("1e308*10 - 1e308*10", "Error: numeric result out of range (beyond the float range)"),
        // Syntax errors win over evaluation errors that come earlier.
        ("1/0 + (", "Error: invalid syntax at column 7: '(' was never closed"),
        // The first evaluation error in Python's order wins.
        ("foo(1/0)", "Error: unknown name 'foo'; available: pi, e, sqrt, abs, round, log, sin, cos, tan, exp, floor, ceil, min, max"),
        ("sqrt(-1) + 1/0", "Error: math domain error"),
        ("pi(1/0)", "Error: division by zero"),
    ];
    let mut failures = Vec::new();
    for (expr, want) in cases {
        let r = calc().evaluate(expr);
        if r.text != *want || r.status != crate::response::ToolStatus::Error || r.data.is_some() {
            failures.push(format!(
                "{expr}: want {want}, got {:?} {}",
                r.status, r.text
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bounds_are_enforced_quickly() {
    let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert_eq!(
        err(&deep),
        "Error: expression too long (over 1000 characters)"
    );
    let deep = format!("{}1{}", "(".repeat(450), ")".repeat(450));
    assert_eq!(
        err(&deep),
        "Error: expression nested too deeply (over 100 levels)"
    );
    assert_eq!(
        err(&"-".repeat(500).to_string()),
        "Error: expression nested too deeply (over 100 levels)"
    );
    assert_eq!(
        err(&"2**".repeat(300).to_string()),
        "Error: expression nested too deeply (over 100 levels)"
    );
    let million = "1+".repeat(500_000);
    let start = std::time::Instant::now();
    assert_eq!(
        err(&million),
        "Error: expression too long (over 1000 characters)"
    );
    // The length is checked before anything is parsed: answering takes microseconds. 500 ms
    // leaves room for a busy machine and still catches work that grows faster than the input.
    assert!(start.elapsed().as_millis() < 500);
    let many = format!("1{}", "+1".repeat(300));
    assert_eq!(
        err(&many),
        "Error: expression too complex (over 250 numbers, operators and calls)"
    );
    assert_eq!(ok(&"1".repeat(1000)), "1".repeat(1000));
    assert_eq!(ok(&format!("{}*10**10", "9".repeat(990))).len(), 1000);
    assert!(err(&format!("{}*10**11", "9".repeat(990))).contains("too large"));
    assert!(err(&format!("-{}*10**11", "9".repeat(990))).contains("too large"));
    assert_eq!(ok(&format!("  {}  ", "9".repeat(999))), "9".repeat(999));
}

#[test]
fn data_carries_the_value() {
    let r = calc().evaluate("(3 + 4) * 5");
    assert_eq!(r.data, Some(serde_json::json!(35)));
    let r = calc().evaluate("7/2");
    assert_eq!(r.data, Some(serde_json::json!(3.5)));
    let r = calc().evaluate("2**63");
    assert_eq!(r.data, Some(serde_json::json!(9223372036854775808u64)));
    let r = calc().evaluate("2**100");
    assert_eq!(
        r.data,
        Some(serde_json::json!("1267650600228229401496703205376"))
    );
}

#[test]
fn native_tool_contract() {
    let t = calc();
    assert_eq!(t.spec().name, "calculator");
    assert_eq!(t.spec().parameters.len(), 1);
    assert_eq!(t.spec().parameters[0].name, "expression");
    assert!(t.spec().description.contains("1000 characters"));
    assert!(!t.spec().external_content);
    assert_eq!(
        t.call(&serde_json::json!({"expression": "2**10"})).text,
        "1024"
    );
    assert_eq!(
        t.call(&serde_json::json!({})).text,
        "Error: the expression must not be empty"
    );
    assert_eq!(
        t.call(&serde_json::json!({"expression": 5})).text,
        "Error: the expression must be a string"
    );
}

#[test]
fn prompts_localize_and_reject_unknown_keys() {
    let mut o = HashMap::new();
    o.insert(
        "calculator.div_zero".to_string(),
        "Fehler: Division durch null".to_string(),
    );
    o.insert(
        "calculator.syntax".to_string(),
        "Fehler: Spalte {column}: {detail}".to_string(),
    );
    let t = CalculatorTool::new(Some(o)).expect("known keys");
    assert_eq!(t.evaluate("1/0").text, "Fehler: Division durch null");
    assert_eq!(
        t.evaluate("1 +").text,
        "Fehler: Spalte 4: the expression ends too early"
    );
    let mut bad = HashMap::new();
    bad.insert("calculator.nope".to_string(), "x".to_string());
    assert!(CalculatorTool::new(Some(bad)).is_err());
}

#[test]
fn every_prompt_key_is_used() {
    let src = [include_str!("../calculator.rs"), include_str!("eval.rs")].concat();
    for (key, _) in PROMPTS {
        let quoted = format!("\"{key}\"");
        let uses = src.matches(&quoted).count();
        assert!(uses >= 2, "prompt key {key} is declared but never used");
    }
}

#[test]
fn maximum_nesting_fits_a_small_thread_stack() {
    // Worker threads have 2 MiB stacks (Rust, tokio); the depth limit keeps the recursion at
    // half of that in unoptimized builds and far less in optimized ones.
    let stack = if cfg!(debug_assertions) {
        1024 * 1024
    } else {
        256 * 1024
    };
    let handle = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(|| {
            let parens = format!("{}1{}", "(".repeat(99), ")".repeat(99));
            let calls = format!("{}1{}", "abs(".repeat(99), ")".repeat(99));
            let powers = format!("{}2", "1**".repeat(99));
            let unary = format!("{}1", "-".repeat(99));
            [parens, calls, powers, unary].map(|e| calc().evaluate(&e).text)
        })
        .expect("spawn");
    assert_eq!(
        handle.join().expect("no stack overflow"),
        ["1", "1", "1", "-1"].map(String::from)
    );
}
