//! Copies that are only the shape an interface dictates are hints; copied
//! bodies still deny (issue 44, `docs/precision.md`). Each case writes a new
//! file beside an indexed one and reads the copy rules' verdict.

use sens_engine::config::RuleConfig;
use sens_engine::finding::Finding;
use sens_engine::index::{CopyKind, Index};
use sens_engine::rules::copy_findings;

/// The copy findings of writing `new` to `new_path` in a project holding
/// `existing` at `existing_path`.
fn findings(existing_path: &str, existing: &str, new_path: &str, new: &str) -> Vec<Finding> {
    let mut index = Index::new(RuleConfig::default()).unwrap();
    assert!(index.update_file(existing_path, existing).unwrap());
    let parsed = index.parse(new_path, new).unwrap().unwrap();
    copy_findings(&index, new_path, new, &parsed, &[])
}

/// The strongest kind of copy the index finds for the new file's largest unit.
fn strongest(existing_path: &str, existing: &str, new_path: &str, new: &str) -> Option<CopyKind> {
    let mut index = Index::new(RuleConfig::default()).unwrap();
    assert!(index.update_file(existing_path, existing).unwrap());
    let parsed = index.parse(new_path, new).unwrap().unwrap();
    let unit = parsed.units.iter().max_by_key(|u| u.tokens).unwrap();
    index
        .copies(unit, |_, _| false)
        .iter()
        .map(|m| m.kind)
        .min()
}

fn denied(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.blocks)
}

const COUNTER_WRITE: &str = r#"
impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.calls += 1;
        self.bytes += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.flushes += 1;
        Ok(())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.write(buf)?;
        Ok(())
    }
}
"#;

/// One delegating `AsyncWrite` impl; `COUNTING_SINK` is another, forwarding
/// to other methods and counting: the trait dictates most of both.
const WRITE_HALF: &str = r#"
impl AsyncWrite for OwnedWriteHalf {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.inner.poll_write_priv(cx, buf)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        self.inner.poll_write_vectored_priv(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.poll_flush_priv(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.poll_shutdown_priv(cx)
    }
}
"#;

const COUNTING_SINK: &str = r#"
impl AsyncWrite for CountingSink {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.written.fetch_add(buf.len(), Ordering::Relaxed);
        self.sink.poll_send(cx, buf)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        self.sink.poll_send_all(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.sink.poll_drain(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.sink.poll_close(cx)
    }
}
"#;

#[test]
fn two_impls_of_one_trait_with_different_bodies_are_not_a_copy() {
    // The trait's signatures make them alike to the rules...
    assert_eq!(
        strongest("src/half.rs", WRITE_HALF, "src/sink.rs", COUNTING_SINK),
        Some(CopyKind::Near)
    );
    // ...which say so as a hint, not a denial.
    let found = findings("src/half.rs", WRITE_HALF, "src/sink.rs", COUNTING_SINK);
    assert!(!found.is_empty() && !denied(&found), "{found:#?}");
}

#[test]
fn the_same_body_under_another_impl_is_a_copy() {
    let same = COUNTER_WRITE.replace("for Counter", "for Meter");
    let found = findings("src/counter.rs", COUNTER_WRITE, "src/meter.rs", &same);
    assert!(denied(&found), "{found:#?}");
    assert_eq!(found[0].rule, "copy.renamed");
}

#[test]
fn display_and_debug_whose_strings_all_differ_are_not_a_renamed_copy() {
    let display = r#"
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Timeout(after) => write!(f, "gave up after {} seconds", after),
            Kind::Refused(host) => write!(f, "connection to {} was refused", host),
            Kind::Closed => write!(f, "the peer closed the connection"),
            Kind::Reset(code) => write!(f, "the peer reset the stream with code {}", code),
            Kind::Tls(reason) => write!(f, "the handshake failed: {}", reason),
        }
    }
}
"#;
    let debug = display
        .replace("Display", "Debug")
        .replace("gave up after {} seconds", "Failure::Timeout({:?})")
        .replace("connection to {} was refused", "Failure::Refused({:?})")
        .replace("the peer closed the connection", "Failure::Closed")
        .replace(
            "the peer reset the stream with code {}",
            "Failure::Reset({:?})",
        )
        .replace("the handshake failed: {}", "Failure::Tls({:?})");
    // Each `fmt` is long enough to deny on its own: the methods of the two
    // traits are judged as the impls are.
    let index = Index::new(RuleConfig::default()).unwrap();
    let parsed = index.parse("src/debug.rs", &debug).unwrap().unwrap();
    let fmt = parsed.units.iter().find(|u| u.name == "fmt").unwrap();
    assert!(fmt.tokens as usize >= RuleConfig::default().floor);
    assert_eq!(
        strongest("src/display.rs", display, "src/debug.rs", &debug),
        Some(CopyKind::Renamed)
    );
    let found = findings("src/display.rs", display, "src/debug.rs", &debug);
    assert!(!found.is_empty() && !denied(&found), "{found:#?}");
    // The same impl for another trait with its strings copied is no protocol.
    let copied = display.replace("for Failure", "for Fault");
    assert!(denied(&findings(
        "src/display.rs",
        display,
        "src/fault.rs",
        &copied
    )));
}

#[test]
fn a_test_body_copied_into_another_test_file_is_a_copy() {
    let test = r#"
#[test]
fn parses_every_header_of_a_request() {
    let raw = "GET /index.html HTTP/1.1\r\nHost: example.org\r\nAccept: */*\r\n\r\n";
    let request = Request::parse(raw.as_bytes()).expect("a valid request");
    assert_eq!(request.method(), "GET");
    assert_eq!(request.path(), "/index.html");
    assert_eq!(request.header("host"), Some("example.org"));
    assert_eq!(request.header("accept"), Some("*/*"));
    assert_eq!(request.headers().count(), 2);
    assert!(request.body().is_empty());
}
"#;
    let copied = test
        .replace("parses_every_header_of_a_request", "reads_the_headers")
        .replace("/index.html", "/about.html");
    let found = findings("tests/request.rs", test, "tests/headers.rs", &copied);
    assert!(denied(&found), "{found:#?}");
}

/// A function copied with every name changed and its docstring left out: the
/// words differ, yet the copied lines deny, and the whole function is what the
/// denial names.
#[test]
fn a_renamed_copy_with_a_line_left_out_is_denied_as_a_whole() {
    let existing = r#"def parse_amount(text, currency="EUR"):
    """Turn a typed amount such as '-1.234,56 EUR' into cents."""
    cleaned = text.strip().replace(currency, "").strip()
    negative = cleaned.startswith("-")
    if negative:
        cleaned = cleaned[1:]
    if "," in cleaned and "." in cleaned:
        cleaned = cleaned.replace(".", "").replace(",", ".")
    elif "," in cleaned:
        cleaned = cleaned.replace(",", ".")
    if not cleaned:
        raise ValueError(f"not an amount: {text!r}")
    whole, _, fraction = cleaned.partition(".")
    cents = int(whole or "0") * 100 + int((fraction + "00")[:2])
    return -cents if negative else cents
"#;
    let copy = r#"def to_cents(raw, unit="EUR"):
    value = raw.strip().replace(unit, "").strip()
    minus = value.startswith("-")
    if minus:
        value = value[1:]
    if "," in value and "." in value:
        value = value.replace(".", "").replace(",", ".")
    elif "," in value:
        value = value.replace(",", ".")
    if not value:
        raise ValueError(f"not an amount: {raw!r}")
    units, _, rest = value.partition(".")
    total = int(units or "0") * 100 + int((rest + "00")[:2])
    return -total if minus else total
"#;
    let found = findings("src/util.py", existing, "src/money.py", copy);
    let denials: Vec<&Finding> = found.iter().filter(|f| f.blocks).collect();
    assert_eq!(denials.len(), 1, "{found:?}");
    assert_eq!(denials[0].new.name, "to_cents", "{found:?}");
    assert_eq!(denials[0].existing.as_ref().unwrap().line, 1, "{found:?}");
}

/// Two functions of one shape, one with a statement more, that say different
/// things (every message and key differs): the shape is the project's idiom, not
/// a copy. The same function with its names changed but its messages kept is one.
#[test]
fn one_shape_saying_other_things_is_a_hint_and_keeping_the_strings_is_a_copy() {
    let existing = r#"def report_start(job, log):
    if job.retries > 3:
        log.warning("job %s started after %d retries", job.name, job.retries)
    elif job.retries:
        log.info("job %s restarted", job.name)
    else:
        log.info("job %s started", job.name)
    job.mark("started-at", log.clock())
    for step in job.steps:
        if step.pending:
            log.debug("step %s of %s waits", step.name, job.name)
    return job.status_line("running", "blue")
"#;
    let shape = r#"def report_stop(job, log):
    if job.retries > 3:
        log.warning("gave up on %s: %d retries spent", job.name, job.retries)
    elif job.retries:
        log.info("%s ended after a retry", job.name)
    else:
        log.info("%s ended", job.name)
    job.mark("ended-at", log.clock())
    log.flush()
    for step in job.steps:
        if step.pending:
            log.debug("step %s of %s never ran", step.name, job.name)
    return job.status_line("stopped", "grey")
"#;
    let found = findings("src/jobs.py", existing, "src/tasks.py", shape);
    assert!(!found.is_empty(), "the shapes match");
    assert!(!denied(&found), "{found:?}");

    let copy = r#"def announce(task, out):
    if task.retries > 3:
        out.warning("job %s started after %d retries", task.name, task.retries)
    elif task.retries:
        out.info("job %s restarted", task.name)
    else:
        out.info("job %s started", task.name)
    task.mark("started-at", out.clock())
    for part in task.parts:
        if part.pending:
            out.debug("step %s of %s waits", part.name, task.name)
    return task.status_line("running", "blue")
"#;
    assert!(denied(&findings(
        "src/jobs.py",
        existing,
        "src/tasks.py",
        copy
    )));
}

/// Two functions of one shape whose strings all differ, that call and reach
/// other things while keeping the conventional names of their parameters (one
/// `describe` per record type): a unit written to the same shape, not a renamed
/// copy. A renamed copy keeps what it calls, whatever it does to its strings;
/// a copy with every name and string changed (the mutation kind `renamed` of
/// `calibrate`) is still one.
#[test]
fn two_functions_whose_strings_all_differ_are_not_a_renamed_copy() {
    let user = r#"def describe_user(record, out):
    out.write("name: %s" % record.name)
    out.write("email: %s" % record.email)
    out.write("joined: %s" % record.joined)
    out.write("city: %s" % record.city)
    out.write("phone: %s" % record.phone)
    out.write("plan: %s" % record.plan)
    out.write("status: %s" % record.status)
    out.write("notes: %s" % record.notes)
    log.info("described a user")
    return out
"#;
    let order = r#"def describe_order(record, out):
    out.append("total: %s" % record.total)
    out.append("items: %s" % record.items)
    out.append("shipped: %s" % record.shipped)
    out.append("carrier: %s" % record.carrier)
    out.append("weight: %s" % record.weight)
    out.append("paid: %s" % record.paid)
    out.append("coupon: %s" % record.coupon)
    out.append("refund: %s" % record.refund)
    audit.debug("described an order")
    return out
"#;
    assert_eq!(
        strongest("src/users.py", user, "src/orders.py", order),
        Some(CopyKind::Renamed)
    );
    let found = findings("src/users.py", user, "src/orders.py", order);
    assert!(!found.is_empty() && !denied(&found), "{found:#?}");

    // The same calls and members with every string and local changed: a copy.
    let renamed = r#"def describe_client(entry, stream):
    stream.write("client: %s" % entry.name)
    stream.write("contact: %s" % entry.email)
    stream.write("since: %s" % entry.joined)
    stream.write("town: %s" % entry.city)
    stream.write("tel: %s" % entry.phone)
    stream.write("tier: %s" % entry.plan)
    stream.write("state: %s" % entry.status)
    stream.write("memo: %s" % entry.notes)
    log.info("client written")
    return stream
"#;
    let found = findings("src/users.py", user, "src/clients.py", renamed);
    assert!(denied(&found), "{found:#?}");
    assert_eq!(found[0].rule, "copy.renamed");

    // Every name and string changed, as `calibrate`'s mutation does: a copy.
    let mutated = r#"def v0(v1, v2):
    v2.v3("s4" % v1.v5)
    v2.v3("s6" % v1.v7)
    v2.v3("s8" % v1.v9)
    v2.v3("s10" % v1.v11)
    v2.v3("s12" % v1.v13)
    v2.v3("s14" % v1.v15)
    v2.v3("s16" % v1.v17)
    v2.v3("s18" % v1.v19)
    v20.v21("s22")
    return v2
"#;
    assert!(denied(&findings(
        "src/users.py",
        user,
        "src/mutated.py",
        mutated
    )));
}

/// A function that applies one formula per output, as a 3x3 and a 4x4 matrix
/// inverse do: `rows` outputs, each summing `rows` products.
fn one_formula_per_output(name: &str, rows: usize) -> String {
    let mut text = format!(
        "def {name}(m, w):
    if len(w) != len(m) * len(m):
        raise ValueError(f\"{{len(w)}} weights for {{len(m)}} inputs\")
    det = determinant(m) or EPSILON
    m = [x / det for x in m if abs(x) > EPSILON]
"
    );
    for r in 0..rows {
        let terms: Vec<String> = (0..rows)
            .map(|c| format!("m[{c}] * w[{}]", r * rows + c))
            .collect();
        text.push_str(&format!("    o{r} = {}\n", terms.join(" + ")));
    }
    let outputs: Vec<String> = (0..rows).map(|r| format!("o{r}")).collect();
    text.push_str(&format!("    return scale(m, [{}])\n", outputs.join(", ")));
    text
}

/// A function of one formula repeated per output has few distinct shingles
/// for its size, so a function a fraction of its size (a 3x3 inverse beside a
/// 9x9 one) finds most of its own among them: it is written to the same
/// shape, not copied. The same function against one of its own size is a
/// copy.
#[test]
fn a_unit_a_fraction_of_a_repetitive_ones_size_is_not_its_copy() {
    let large = one_formula_per_output("mix9", 9);
    let small = one_formula_per_output("mix3", 3);
    assert_eq!(
        strongest("src/large.py", &large, "src/small.py", &small),
        Some(CopyKind::Near)
    );
    let found = findings("src/large.py", &large, "src/small.py", &small);
    assert!(!found.is_empty() && !denied(&found), "{found:#?}");

    let same_size = small.replace("    return", "    m = normalize(m)\n    return");
    let found = findings("src/same.py", &same_size, "src/small.py", &small);
    assert!(denied(&found), "{found:#?}");
}

/// The keyword parameters every verb function of an HTTP client declares.
const VERB_PARAMETERS: &str = "url: str, *, params: dict | None = None, \
headers: dict | None = None, cookies: dict | None = None, auth: tuple | None = None, \
proxy: str | None = None, follow_redirects: bool = False, verify: bool = True, \
timeout: float = 5.0, trust_env: bool = True";

const VERB_ARGUMENTS: &str = "url, params=params, headers=headers, cookies=cookies, \
auth=auth, proxy=proxy, follow_redirects=follow_redirects, verify=verify, \
timeout=timeout, trust_env=trust_env";

/// One public function per HTTP verb, each forwarding its long keyword
/// parameter list to `request` (httpx's `get` and `patch`, which sends a body
/// too): they match on what they declare, and their bodies, one call each, say
/// what they do. A function of the same signature whose body of logic is
/// copied with a line changed is a copy.
#[test]
fn parallel_functions_whose_signatures_are_most_of_them_are_not_a_copy() {
    let get =
        format!("def get({VERB_PARAMETERS}):\n    return request(\"GET\", {VERB_ARGUMENTS})\n");
    let patch = format!(
        "def patch({VERB_PARAMETERS}, content: bytes | None = None, json: object = None):
    return request(\"PATCH\", {VERB_ARGUMENTS}, content=content, json=json)\n"
    );
    assert_eq!(
        strongest("api/get.py", &get, "api/patch.py", &patch),
        Some(CopyKind::Near)
    );
    let found = findings("api/get.py", &get, "api/patch.py", &patch);
    assert!(!found.is_empty() && !denied(&found), "{found:#?}");

    let body =
        "    client = Client(cookies=cookies, proxy=proxy, verify=verify, trust_env=trust_env)
    for attempt in range(retries(timeout)):
        response = client.request(\"GET\", url, params=params, headers=headers, auth=auth)
        if response.status_code not in RETRIED:
            break
        client.sleep(backoff(attempt, follow_redirects))
    client.close()
    return response
";
    let original = format!("def fetch({VERB_PARAMETERS}):\n{body}");
    let copied = format!(
        "def fetch_again({VERB_PARAMETERS}):\n{}",
        body.replace("client.close()", "client.shutdown(wait=True)")
    );
    let found = findings("api/fetch.py", &original, "api/again.py", &copied);
    assert!(denied(&found), "{found:#?}");
}
