//! The command: evaluate the input against the configuration's chain (and, for a conditional
//! answer with `--object`, the enforcer's round trip), print, and exit by the decision.

use super::args::CheckArgs;
use super::error::InputError;
use super::render::render_with;
use super::runtime::offline_runtime;
use crate::authorizer::{Answer, Chain, Deadline, Input};
use crate::cli::{ConfigSource, ExitStatus, check_conditions};
use crate::decision::Decision;
use crate::review::{ConditionsReview, DecisionType};
use std::time::Duration;

/// Evaluates the review against the chain and prints the result.
pub fn run(args: CheckArgs) -> ExitStatus {
    let usage = |msg: String| {
        eprintln!("error: {msg}");
        ExitStatus::Usage
    };
    if let Some(pod) = &args.pod {
        return super::pod::run(&args, pod);
    }
    let input = match args.input() {
        Ok(i) => i,
        Err(e) => return usage(e.to_string()),
    };
    let loaded = match ConfigSource::resolve(args.config.as_deref()).load() {
        Ok(l) => l,
        Err(errors) => {
            for e in errors.iter() {
                eprintln!("{e}");
            }
            return ExitStatus::Usage;
        }
    };
    let chain = match Chain::build(&loaded.config) {
        Ok(c) => c,
        Err(e) => return usage(format!("{}: {e}", loaded.source.name)),
    };
    let runtime = match offline_runtime() {
        Ok(r) => r,
        Err(e) => return usage(e.to_string()),
    };
    let answer = evaluate(&runtime, &chain, &input);
    let admission = input.object.is_some();
    let outcome = match (&answer.conditional, args.object.is_some()) {
        (Some(conditional), true) => match round_trip(&args, &runtime, &chain, &input, conditional)
        {
            Ok(o) => Some(o),
            Err(e) => return usage(e.to_string()),
        },
        _ => None,
    };
    print!(
        "{}",
        render_with(&answer, args.output, admission, outcome.as_ref())
    );
    exit_status(match outcome.map(|o| o.decision_type) {
        None => answer.decision,
        Some(DecisionType::Allow) => Decision::Allow,
        Some(DecisionType::Deny) => Decision::Deny,
        Some(_) => Decision::NoOpinion,
    })
}

/// The enforcer's round trip: the conditional answer evaluated against `--object` (and
/// `--old-object`) as warrant evaluates the API server's AuthorizationConditionsReview.
fn round_trip(
    args: &CheckArgs,
    runtime: &tokio::runtime::Runtime,
    chain: &Chain,
    input: &Input,
    conditional: &crate::review::ConditionsAwareDecision,
) -> Result<crate::review::ConditionsAwareDecision, InputError> {
    let (object, old) = args.conditions_objects()?;
    let request = check_conditions::admission_request(
        &input.review,
        object.as_ref(),
        old.as_ref(),
        args.dry_run,
    );
    let review = ConditionsReview {
        decision: conditional.clone(),
        admission_request: request,
        uid: check_conditions::CHECK_UID.to_owned(),
    };
    let deadline = Deadline::after(Duration::from_secs(30));
    Ok(runtime.block_on(chain.evaluate_conditions(&review, deadline)))
}

fn exit_status(decision: Decision) -> ExitStatus {
    match decision {
        Decision::Allow => ExitStatus::Success,
        Decision::Deny => ExitStatus::Denied,
        Decision::NoOpinion => ExitStatus::NoOpinion,
    }
}

/// Evaluates one input against a chain on a current-thread runtime, as `check` and `test` do:
/// an admission input through the validation ring, a review through the whole chain.
pub fn evaluate(runtime: &tokio::runtime::Runtime, chain: &Chain, input: &Input) -> Answer {
    let deadline = Deadline::after(Duration::from_secs(30));
    match input.object {
        Some(_) => runtime.block_on(chain.admit(input, deadline)),
        None => runtime.block_on(chain.authorize(input, deadline)),
    }
}
