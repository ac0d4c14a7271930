//! A call carried out inside the sandbox: decide it, record it, run it with the egress
//! proxy beside it, and, under `on-failure`, offer one extra permission for a re-run.
//!
//! This is `cordon exec` without its flags, so that every surface that runs a command
//! contained (the hook's contain mode, the decision service) runs it the same way. A run
//! whose start cannot be recorded does not start; a decision reached for the full tier
//! never runs at the fallback tier (the permit requires the tier, and the call is judged
//! again for the fallback tier when the full one is unavailable).

use crate::error::GateError;
use crate::flow::{Decided, Gate, Human, Outcome, Refused};
use crate::offer::{GrantKind, HostPlaces, NoOffer};
use crate::onfailure::{AfterTrial, Escalated, Escalation, TrialRun};
use crate::record::RunFacts;
use cordon_egress::{Decision as EgressDecision, EgressEvent, EgressProxy, ProxyConfig};
use cordon_fs::Dir;
use cordon_policy::net::NetworkPolicy;
use cordon_policy::terminal::sanitize_for_terminal;
use cordon_policy::{
    ApprovalPolicy, Containment, Decision, FileFacts, Request, SandboxMode, Source, Step,
};
use cordon_sandbox::{
    Helper, HelperHints, Network, Permit, SandboxBuilder, SandboxErrorKind, Started, Tier,
};
use cordon_store::{ContainmentBlock, EscalationRecord, Phase, RunTier};
use std::path::PathBuf;

/// How to run: the sandbox as the flags describe it, without its network, which the
/// gate adds (the egress proxy when anything may be reached).
pub struct RunOptions {
    /// The sandbox, built from the flags and the policy's `[sandbox]` table.
    pub builder: SandboxBuilder,
    /// The network the flags asked for (`--net`, `--proxy-socket`).
    pub network: Network,
    /// Print every egress decision as a JSON line on stderr.
    pub verbose: bool,
    /// The run requires the full tier (`--require full`, `[sandbox] require`, the
    /// default): where it is unavailable nothing runs, and a decision reached for it is
    /// not judged again for the fallback tier.
    pub require_full: bool,
    /// Roots the egress proxy trusts for inspected upstreams besides the system's (a
    /// private CA). Never read from the environment.
    pub upstream_roots: Vec<cordon_egress::CertificateDer<'static>>,
    /// Credentials the proxy adds for the command; the command sees only their
    /// placeholders, under their variables, and never a variable or argument that holds
    /// a real value.
    pub credentials: Vec<cordon_egress::Credential>,
}

/// A contained run that happened.
#[derive(Debug)]
pub struct Ran {
    /// What was decided.
    pub decided: Decided,
    /// How the (last) run ended.
    pub outcome: cordon_sandbox::Outcome,
    /// The egress proxy's decisions during it.
    pub events: Vec<EgressEvent>,
    /// The on-failure escalation, if one was asked.
    pub escalation: Option<EscalationRecord>,
    /// An approved re-run that could not be carried out (the first run's result stands).
    pub rerun_error: Option<GateError>,
    /// Under `on-failure`: the failed run's blocked write that was not offered, and why.
    pub not_offered: Option<NoOffer>,
    /// What the run landed on the host could not be recorded in its session: why. Later
    /// calls of the session do not know these writes, so the run counts as failed.
    pub session_error: Option<String>,
}

impl Ran {
    /// What containment blocked, the proxy's refusals included.
    pub fn blocked(&self) -> Vec<ContainmentBlock> {
        let mut out: Vec<ContainmentBlock> = self
            .outcome
            .report
            .blocked
            .iter()
            .map(|b| ContainmentBlock {
                kind: b.kind.as_str().to_string(),
                target: b.target.clone(),
                detail: b.detail.clone(),
            })
            .collect();
        out.extend(
            self.events
                .iter()
                .filter(|e| e.decision == EgressDecision::Deny)
                .map(|e| match (&e.method, &e.path) {
                    (Some(method), Some(path)) => ContainmentBlock {
                        kind: "request".into(),
                        target: format!("{method} {}:{}{path}", e.host, e.port),
                        detail: format!("{} ({})", e.reason, e.code),
                    },
                    _ => ContainmentBlock {
                        kind: "connect".into(),
                        target: format!("{}:{}", e.host, e.port),
                        detail: format!("{} ({})", e.reason, e.code),
                    },
                }),
        );
        out
    }

    /// The denial report as JSON: the sandbox's, with refused connections among
    /// `blocked` and every egress decision under `egress`.
    pub fn report_json(&self) -> serde_json::Value {
        let mut report =
            serde_json::to_value(&self.outcome.report).unwrap_or(serde_json::Value::Null);
        report["blocked"] = serde_json::to_value(self.blocked()).unwrap_or_default();
        report["egress"] = serde_json::to_value(&self.events).unwrap_or_default();
        report
    }
}

/// What became of a call `cordon exec` was asked to run.
#[derive(Debug)]
pub enum Executed {
    /// It ran.
    Ran(Box<Ran>),
    /// It was refused; nothing ran.
    Refused(Refused),
    /// It waits for a human; nothing ran.
    Pending(Decided),
}

/// The containment a run with these settings will most likely get. Only a guess that
/// saves a wasted helper: a permit for the full tier makes the sandbox refuse to run at
/// a lower one, and the call is then judged again for the tier it can have.
pub fn expected_containment(
    mode: SandboxMode,
    network: &Network,
    home_visible: bool,
) -> Containment {
    if mode == SandboxMode::FullAccess {
        return Containment::None;
    }
    let root = rustix::process::geteuid().is_root();
    let no_userns = !cordon_sandbox::UsernsSettings::read()
        .restrictions(root)
        .is_empty();
    if no_userns {
        return Containment::Fallback;
    }
    Containment::full(matches!(network, Network::Full), home_visible)
}

/// A contained run executes the command it was given; a call that presets or an edit
/// changed is refused rather than run in a shape other than the one judged.
fn refuse_reshaped(outcome: Outcome) -> Outcome {
    let d = outcome.decided();
    if d.presets.is_empty() && !d.edited {
        return outcome;
    }
    let mut d = d.clone();
    let fields = d.presets.join(", ");
    d.verdict.decision = Decision::Deny;
    d.verdict.reason = format!(
        "a preset sets {fields} on this call, and `cordon exec` runs only the command it was given; remove the `[[preset]]` for tool `{}` or call cordon through a surface that returns the merged input",
        d.request.tool
    );
    d.verdict.source = Source::new(Step::Validate, "preset");
    // The fix is in the sentence; the guard hint would be wrong here.
    Outcome::Refused(Refused {
        decided: d,
        fixes: Vec::new(),
    })
}

/// Decide `request` for a contained run under `containment`, record it, and run it.
/// `helper` is a sandbox helper started ahead (or `None`).
// The arguments are the call, its facts, where it runs, who answers, and how: grouping
// them would only rename them.
#[allow(clippy::too_many_arguments)]
pub fn execute(
    gate: &Gate,
    request: &Request,
    fs: &dyn FileFacts,
    containment: Containment,
    mut human: Human<'_>,
    helper: Option<Helper>,
    opts: &RunOptions,
    trace: bool,
) -> Result<Executed, GateError> {
    let outcome = refuse_reshaped(gate.decide(request, fs, containment, human.reborrow(), trace));
    let on_failure = gate.policy().approval() == ApprovalPolicy::OnFailure;
    let (decided, permit, watch) = match admitted(gate, outcome, on_failure)? {
        Ok(admitted) => admitted,
        Err(instead) => return Ok(instead),
    };

    let net_settings = gate.policy().network().clone();
    let net_policy = NetworkPolicy::from_settings(&net_settings)
        .map_err(|e| GateError::Network(e.to_string()))?;
    // No allowlist, no proxy: nothing may be reached, so there is nothing to relay (and
    // nothing an `on-failure` run could be offered: a host is never added to an empty
    // allowlist by an escalation).
    let want_proxy = matches!(opts.network, Network::None) && !net_policy.is_empty();
    let needs_full = permit.requires_full_tier();
    // cordon's own files exist before the sandbox is planned, so its masks cover them.
    gate.prepare_own_files().map_err(GateError::Audit)?;
    let prepared = prepare(
        helper,
        opts,
        opts.builder.clone(),
        &net_policy,
        want_proxy,
        permit,
    )?;
    // A decision that cannot be recorded does not run: the sandbox is built meanwhile,
    // but its command waits for `go`, and dropping `prepared` stops it.
    gate.append(&gate.record(&decided, Phase::Start, None))
        .map_err(GateError::Audit)?;
    let mut run = match go(prepared) {
        Ok(run) => run,
        Err(GateError::Sandbox(e)) if e.kind == SandboxErrorKind::TierUnavailable => {
            // The tier required is not there, and nothing ran: the start recorded above
            // gets its end.
            let facts = RunFacts {
                tier: Some(RunTier::Unavailable),
                ..Default::default()
            };
            let _ = gate.append(&gate.record(&decided, Phase::End, Some(&facts)));
            if needs_full && !opts.require_full && containment.is_full_tier() {
                // The full tier the decision counted on is not there, and the user
                // accepts the fallback: judge the call again for it.
                return execute(
                    gate,
                    request,
                    fs,
                    Containment::Fallback,
                    human,
                    None,
                    opts,
                    trace,
                );
            }
            return Err(GateError::Sandbox(e));
        }
        Err(e) => return Err(e),
    };

    // What landed is recorded after each run (an approved re-run replaces `run`).
    let mut session_error = land(gate, &decided, &run);
    let places = HostPlaces::of_gate(gate, run.outcome.report.tier);
    let after = watch.map(|w| {
        w.after_run(
            run.outcome.status,
            &run.outcome.report,
            &run.events,
            &places,
        )
    });
    let net = Net {
        settings: &net_settings,
        policy: &net_policy,
        want_proxy,
    };
    let again = RerunWith {
        opts,
        net: &net,
        places: &places,
    };
    let aftermath = follow_trial(
        gate,
        human.reborrow(),
        &decided,
        &again,
        after,
        &mut run,
        &mut session_error,
    );
    let ran = Ran {
        decided,
        outcome: run.outcome,
        events: run.events,
        escalation: aftermath.escalation,
        rerun_error: aftermath.rerun_error,
        not_offered: aftermath.not_offered,
        session_error,
    };
    let facts = RunFacts {
        tier: Some(run_tier(ran.outcome.report.tier)),
        exit_status: Some(i32::from(ran.outcome.status)),
        timed_out: Some(ran.outcome.timed_out),
        blocked: ran.blocked(),
        escalation: ran.escalation.clone(),
        egress: crate::record::egress_log(&ran.events),
    };
    if let Err(e) = gate.append(&gate.record(&ran.decided, Phase::End, Some(&facts))) {
        eprintln!(
            "cordon: the end of this run could not be written to the audit log: {}",
            sanitize_for_terminal(&e.to_string())
        );
    }
    Ok(Executed::Ran(Box::new(ran)))
}

/// What a run starts from: the decision, its permit, and (`on-failure`) its trial's watch.
type Admitted = (Decided, Permit, Option<TrialRun>);

/// What `outcome` lets run; or, recorded, what the caller gets instead: a refusal (also
/// an unanswered ask; one that cannot be recorded is still one), or a pending approval.
fn admitted(
    gate: &Gate,
    outcome: Outcome,
    on_failure: bool,
) -> Result<Result<Admitted, Executed>, GateError> {
    Ok(Ok(match outcome {
        Outcome::Refused(r) => {
            let _ = gate.append(&gate.record(&r.decided, Phase::Decision, None));
            return Ok(Err(Executed::Refused(r)));
        }
        Outcome::Ask(d) => {
            let r = gate.refuse_unanswered(d);
            let _ = gate.append(&gate.record(&r.decided, Phase::Decision, None));
            return Ok(Err(Executed::Refused(r)));
        }
        Outcome::Pending(d) => {
            gate.append(&gate.record(&d, Phase::Decision, None))
                .map_err(GateError::Audit)?;
            return Ok(Err(Executed::Pending(d)));
        }
        Outcome::Permitted(p) => {
            let (d, permit) = p.into_parts();
            let watch = on_failure.then(|| TrialRun::of_permitted(d.clone()));
            (d, permit, watch)
        }
        Outcome::Trial(t) => {
            let (watch, permit) = t.begin();
            (watch.decided().clone(), permit, Some(watch))
        }
    }))
}

/// What a trial run that containment blocked led to.
#[derive(Default)]
struct Aftermath {
    escalation: Option<EscalationRecord>,
    rerun_error: Option<GateError>,
    not_offered: Option<NoOffer>,
}

/// How an approved re-run is made: the run's options, its network, the host's places.
struct RerunWith<'a> {
    opts: &'a RunOptions,
    net: &'a Net<'a>,
    places: &'a HostPlaces,
}

/// After an `on-failure` trial run (`after`): no re-run offered (said why), or the one
/// permission more asked for; approved, the re-run replaces `run` (and what it landed
/// is recorded, unless recording failed before); pending, said how to approve it.
fn follow_trial(
    gate: &Gate,
    human: Human<'_>,
    decided: &Decided,
    with: &RerunWith<'_>,
    after: Option<AfterTrial>,
    run: &mut Run,
    session_error: &mut Option<String>,
) -> Aftermath {
    let mut out = Aftermath::default();
    match after {
        Some(AfterTrial::NotOffered(_, why)) => {
            eprintln!(
                "cordon: containment blocked the write to {}; no re-run is offered: {}",
                sanitize_for_terminal(&why.path.display().to_string()),
                sanitize_for_terminal(&why.reason)
            );
            out.not_offered = Some(why);
        }
        Some(AfterTrial::Blocked(blocked)) => match blocked.escalate(gate, human) {
            Escalated::Declined {
                escalation: e,
                answer,
                pending,
                ..
            } => {
                if let Some(id) = pending {
                    eprintln!(
                        "cordon: containment blocked the command; re-running with {} needs approval (pending approval {id}; `cordon approvals approve {id}`, then run again)",
                        sanitize_for_terminal(&e.describe())
                    );
                }
                out.escalation = Some(EscalationRecord {
                    asked: e.describe(),
                    answer,
                    rerun: None,
                });
            }
            Escalated::Rerun {
                escalation: e,
                permit,
                answer,
                ..
            } => {
                eprintln!(
                    "cordon: re-running with {} (approved)",
                    sanitize_for_terminal(&e.describe())
                );
                let mut record = EscalationRecord {
                    asked: e.describe(),
                    answer,
                    rerun: None,
                };
                let (opts, net, places) = (with.opts, with.net, with.places);
                match rerun(gate, decided, opts, net, places, &e, permit, &mut record) {
                    Ok(r) => {
                        *run = r;
                        *session_error = session_error.take().or_else(|| land(gate, decided, run));
                    }
                    Err(err) => out.rerun_error = Some(err),
                }
                out.escalation = Some(record);
            }
        },
        _ => {}
    }
    out
}

/// Record what a run landed in the call's session; why it could not be, if it could not.
fn land(gate: &Gate, decided: &Decided, run: &Run) -> Option<String> {
    let e = gate.record_landed(decided, &run.outcome.report).err()?;
    let session = decided.request.session.as_deref().unwrap_or_default();
    Some(format!(
        "what the run changed could not be recorded in session `{}` ({e}); later calls of the session cannot be checked against it",
        sanitize_for_terminal(session)
    ))
}

/// The network of a run: the settings, the policy made from them, and whether the
/// egress proxy serves it.
struct Net<'a> {
    settings: &'a cordon_policy::NetworkSettings,
    policy: &'a NetworkPolicy,
    want_proxy: bool,
}

/// The approved re-run: recorded before it starts; if it cannot be, it does not start.
#[allow(clippy::too_many_arguments)]
fn rerun(
    gate: &Gate,
    decided: &Decided,
    opts: &RunOptions,
    net: &Net<'_>,
    places: &HostPlaces,
    extra: &Escalation,
    permit: Permit,
    record: &mut EscalationRecord,
) -> Result<Run, GateError> {
    let (settings, want_proxy) = (net.settings, net.want_proxy);
    let (builder, net) = match extra {
        Escalation::Write(g) => {
            // Decided again: the host may have changed while the human was asked.
            if let Err(why) = g.still_holds(places) {
                record.rerun = Some(format!("not started: {}", why.reason));
                return Err(GateError::Changed(g.path().to_path_buf()));
            }
            let builder = match g.kind() {
                GrantKind::File => opts.builder.clone().writable_file(g.path()),
                GrantKind::Directory => opts.builder.clone().writable_root(g.path()),
            };
            (builder, net.policy.clone())
        }
        Escalation::Host(h) => {
            let mut s = settings.clone();
            s.allow.push(h.clone());
            let n = NetworkPolicy::from_settings(&s)
                .map_err(|e| GateError::Network(format!("cannot allow {h}: {e}")))?;
            (opts.builder.clone(), n)
        }
        Escalation::Request(r) => {
            let mut s = settings.clone();
            s.rules.push(r.clone());
            let n = NetworkPolicy::from_settings(&s).map_err(|e| {
                GateError::Network(format!("cannot widen the rule of {}: {e}", r.host))
            })?;
            (opts.builder.clone(), n)
        }
    };
    let prepared = prepare(
        None,
        opts,
        builder,
        &net,
        want_proxy || matches!(extra, Escalation::Host(_) | Escalation::Request(_)),
        permit,
    )?;
    let facts = RunFacts {
        escalation: Some(record.clone()),
        ..Default::default()
    };
    if let Err(e) = gate.append(&gate.record(decided, Phase::Rerun, Some(&facts))) {
        drop(prepared);
        record.rerun = Some("not started: the audit log failed".into());
        return Err(GateError::Audit(e));
    }
    match go(prepared) {
        Ok(r) => {
            record.rerun = Some("ran".into());
            Ok(r)
        }
        Err(e) => {
            record.rerun = Some(format!("failed: {e}"));
            Err(e)
        }
    }
}

/// A sandbox built and waiting for its go, with the egress proxy serving it.
struct Prepared {
    started: Started,
    proxy: Option<Egress>,
    /// For the sentences on the names the command looked up.
    net_policy: NetworkPolicy,
}

/// One sandboxed run and the egress decisions made during it.
struct Run {
    outcome: cordon_sandbox::Outcome,
    events: Vec<EgressEvent>,
}

fn prepare(
    helper: Option<Helper>,
    opts: &RunOptions,
    builder: SandboxBuilder,
    net_policy: &NetworkPolicy,
    want_proxy: bool,
    permit: Permit,
) -> Result<Prepared, GateError> {
    let proxy = if want_proxy {
        Some(Egress::start(
            net_policy.clone(),
            opts.verbose,
            &opts.upstream_roots,
            &opts.credentials,
        )?)
    } else {
        None
    };
    let network = match &proxy {
        Some(p) => Network::Proxy {
            socket: p.socket.clone(),
            port: cordon_sandbox::DEFAULT_PROXY_PORT,
        },
        None => opts.network.clone(),
    };
    if proxy.is_none() && !opts.credentials.is_empty() {
        return Err(GateError::Egress(
            "credentials are added by cordon's egress proxy, which this run does not use (drop --net full or --proxy-socket, or the credentials)".into(),
        ));
    }
    let mut builder = match proxy.as_ref().and_then(|p| p.ca_bundle.clone()) {
        Some(bundle) => builder.ca_bundle(bundle),
        None => builder,
    };
    // Loopback goes to the proxy only when the policy lets the proxy reach the host's.
    let host_loopback = [
        std::net::IpAddr::from([127, 0, 0, 1]),
        std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
    ];
    builder = builder.proxy_loopback(
        net_policy
            .allow_private()
            .iter()
            .any(|net| host_loopback.iter().any(|ip| net.contains(ip))),
    );
    // Only placeholders go in: the real values are withheld from every variable and
    // argument, whatever its name (a second variable holding the same token too).
    for cred in &opts.credentials {
        if let Some(var) = cred.env() {
            builder = builder.set_env(var, cred.placeholder());
        }
    }
    builder = builder.withhold_values(
        opts.credentials
            .iter()
            .map(cordon_egress::Credential::withheld_value)
            .collect(),
    );
    let spec = builder
        .network(network)
        .build()
        .map_err(GateError::Sandbox)?;
    let helper = match helper {
        Some(h) => h,
        None => Helper::spawn(HelperHints::for_spec(&spec)).map_err(GateError::Sandbox)?,
    };
    let started = helper.start(&spec, permit).map_err(GateError::Sandbox)?;
    Ok(Prepared {
        started,
        proxy,
        net_policy: net_policy.clone(),
    })
}

fn go(prepared: Prepared) -> Result<Run, GateError> {
    let result = prepared.started.finish();
    let events = prepared.proxy.map(Egress::finish).unwrap_or_default();
    let mut outcome = result.map_err(GateError::Sandbox)?;
    crate::lookups::explain(&mut outcome.report, &prepared.net_policy);
    Ok(Run { outcome, events })
}

/// Create `base` (mode 0700) if needed and check that it is this user's directory and
/// nobody else can use it: in a shared `/tmp`, another user could have made it first. It
/// is opened once (never through a link at its name); every run directory is made and
/// removed beneath it.
fn private_parent(base: &std::path::Path) -> Result<Dir, GateError> {
    let dir = Dir::private_ambient(base).map_err(|e| {
        GateError::Egress(format!(
            "refusing to use {}: it must be a directory of this user's that only it can use ({e})",
            base.display()
        ))
    })?;
    let meta = dir
        .own_stat()
        .map_err(|e| GateError::Egress(format!("cannot inspect {}: {e}", base.display())))?;
    if meta.st_mode & 0o077 != 0 {
        return Err(GateError::Egress(format!(
            "refusing to use {}: it must be a directory of this user's that only it can use",
            base.display()
        )));
    }
    Ok(dir)
}

/// Remove the egress directories left under `base` by runs whose cordon is gone.
fn sweep_stale(base: &Dir) {
    let Ok(names) = base.names() else {
        return;
    };
    for name in names {
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = rustix::process::Pid::from_raw(pid)
            .is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
        if !alive {
            remove_run_dir(base, std::path::Path::new(&name));
        }
    }
}

/// The egress proxy of one run, on a Unix socket in a private directory.
struct Egress {
    handle: cordon_egress::EgressHandle,
    /// The per-user parent, and the run's directory's name in it.
    base: Dir,
    name: PathBuf,
    socket: PathBuf,
    /// The roots bundle with the run's CA, when some host is inspected.
    ca_bundle: Option<PathBuf>,
}

/// The private parent of the egress proxies' directories of this user: one per user,
/// so that the directories of runs whose cordon was killed (SIGKILL leaves them) are
/// found and removed by the next run.
pub(crate) fn egress_base() -> PathBuf {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    runtime.join(format!(
        "cordon-egress-{}",
        rustix::process::geteuid().as_raw()
    ))
}

impl Egress {
    fn start(
        policy: NetworkPolicy,
        verbose: bool,
        upstream_roots: &[cordon_egress::CertificateDer<'static>],
        credentials: &[cordon_egress::Credential],
    ) -> Result<Egress, GateError> {
        let base = egress_base();
        let base_dir = private_parent(&base)?;
        sweep_stale(&base_dir);
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = PathBuf::from(format!("{}-{nonce:08x}", std::process::id()));
        let dir = base.join(&name);
        // `create_dir` fails if anything is already there: no planted path.
        let run_dir = base_dir
            .create_dir(&name, 0o700)
            .and_then(|()| base_dir.open_dir(&name))
            .map_err(|e| {
                GateError::Egress(format!(
                    "cannot create the egress directory {}: {e}",
                    dir.display()
                ))
            })?;
        let socket = dir.join("egress.sock");
        let inspects = !policy.rules().is_empty() || !credentials.is_empty();
        let mut config = ProxyConfig::new(policy);
        let mut ca_bundle = None;
        if inspects {
            // A new CA for every run; its key never leaves this process's memory. Only
            // the bundle (system roots plus the CA's certificate) is written, for the
            // sandbox to read.
            let made = cordon_egress::RunCa::generate().and_then(|ca| {
                let path = dir.join(CA_BUNDLE);
                // Readable by everyone who can reach it: the directory around it is this
                // user's alone, and the sandbox sees the file read-only.
                run_dir
                    .write_new(
                        std::path::Path::new(CA_BUNDLE),
                        ca.bundle_pem().as_bytes(),
                        0o644,
                    )
                    .map_err(|e| {
                        cordon_egress::TlsSetupError::new(format!(
                            "cannot write {}: {e}",
                            path.display()
                        ))
                    })?;
                Ok((ca, path))
            });
            let (ca, path) = made.map_err(|e| {
                remove_run_dir(&base_dir, &name);
                GateError::Egress(e.to_string())
            })?;
            config = config
                .with_ca(ca)
                .with_extra_upstream_roots(upstream_roots.to_vec())
                .with_credentials(credentials.to_vec());
            ca_bundle = Some(path);
        }
        if verbose {
            config = config.with_sink(|e: &EgressEvent| eprintln!("{}", e.to_json()));
        }
        // The proxy's threads must leave SIGINT, SIGTERM and SIGHUP to the thread that
        // forwards them to the command.
        let started = cordon_sandbox::with_forwarded_signals_blocked(|| {
            EgressProxy::start_unix(config, &socket)
        });
        let handle = started.map_err(|e| {
            remove_run_dir(&base_dir, &name);
            GateError::Egress(e.to_string())
        })?;
        Ok(Egress {
            handle,
            base: base_dir,
            name,
            socket,
            ca_bundle,
        })
    }

    fn finish(self) -> Vec<EgressEvent> {
        let events = self.handle.events();
        self.handle.shutdown();
        remove_run_dir(&self.base, &self.name);
        events
    }
}

/// The CA bundle's name in a run's egress directory.
const CA_BUNDLE: &str = "ca-bundle.pem";

/// Remove the run directory `name` under `base`: the two files cordon puts there, then
/// the directory itself (which fails, and is left, if anything else is in it).
fn remove_run_dir(base: &Dir, name: &std::path::Path) {
    if let Ok(run) = base.open_dir(name) {
        let _ = run.remove(std::path::Path::new("egress.sock"));
        let _ = run.remove(std::path::Path::new(CA_BUNDLE));
    }
    let _ = base.remove(name);
}

/// The tier a run got, as its end record names it.
fn run_tier(tier: Tier) -> RunTier {
    match tier {
        Tier::Full => RunTier::Full,
        Tier::Fallback => RunTier::Fallback,
    }
}

#[cfg(test)]
mod tests;
