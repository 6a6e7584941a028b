//! SCRAPI simulation files (`evals:` mapping, or a bare list of evals) into [`Simulation`]s:
//! `{name, tags, steps: [{goal, success_criteria, response_guide, max_turns | static_utterance,
//! inject_variables}], expectations, session_parameters}` (shared/CES.md section 4).
//!
//! Every problem is reported with its line and key path, as for goldens. Each simulation
//! becomes a [`crate::model::Case`] with a simulated user ([`Simulation::into_case`]), which
//! `goldgate run` plays and `goldgate list` lists like any case.

use super::{criteria, items, listed_tags, parameters, take_container, unique};
use crate::diagnostic::{Code, Diagnostics};
use crate::model::{Simulation, SimulationStep};
use crate::yaml::{Fields, Node, expect_text, indexed};

/// Every simulation of a file.
pub fn load(root: &Node, diags: &mut Diagnostics) -> Vec<Simulation> {
    let evals = match root.as_seq() {
        Some(list) => list,
        None => {
            let Some(mut fields) = Fields::of(root, "", diags) else {
                return Vec::new();
            };
            let evals = fields.require("evals", "a list of simulations", diags);
            fields.finish(diags);
            match evals {
                Some(node) => items(node, "evals", "a list of simulations", diags),
                None => return Vec::new(),
            }
        }
    };
    let prefix = if root.as_seq().is_some() { "" } else { "evals" };
    unique("simulation", (evals, prefix), diags, simulation, |s| {
        &s.name
    })
}

fn simulation(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<Simulation> {
    let mut fields = Fields::of(node, path, diags)?;
    let name = fields.required_string("name", diags);
    let tags = listed_tags(&mut fields, diags);
    let steps_path = fields.path_of("steps");
    let steps = fields
        .require("steps", "a list of steps", diags)
        .map(|list| steps(list, &steps_path, diags))
        .unwrap_or_default();
    let expectations = take_container(&mut fields, "expectations", "[]", diags)
        .map(|list| criteria(list, &fields.path_of("expectations"), diags))
        .unwrap_or_default();
    let session_parameters = take_container(&mut fields, "session_parameters", "{}", diags)
        .map(|params| parameters(params, &fields.path_of("session_parameters"), diags))
        .unwrap_or_default();
    fields.finish(diags);
    Some(Simulation {
        name: name?,
        location: diags.location(node.line, node.column),
        tags,
        steps,
        expectations,
        session_parameters,
    })
}

fn steps(list: &Node, path: &str, diags: &mut Diagnostics) -> Vec<SimulationStep> {
    let nodes = items(list, path, "a list of steps", diags);
    if nodes.is_empty() && list.as_seq().is_some() {
        diags
            .at(list)
            .error(Code::G102, "a simulation needs at least one step")
            .field(path)
            .hint("add `- goal: ...` with its `success_criteria`");
    }
    indexed(nodes, path)
        .filter_map(|(path, node)| step(node, &path, diags))
        .collect()
}

fn step(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<SimulationStep> {
    let mut fields = Fields::of(node, path, diags)?;
    let goal = fields.string("goal", diags);
    let success_criteria = fields.string("success_criteria", diags);
    let response_guide = fields.string("response_guide", diags);
    let max_turns = fields
        .take("max_turns")
        .and_then(|n| max_turns(n, &fields.path_of("max_turns"), diags));
    let static_utterance = fields
        .take("static_utterance")
        .and_then(|n| expect_text(n, &fields.path_of("static_utterance"), diags));
    let inject_variables = take_container(&mut fields, "inject_variables", "{}", diags)
        .map(|vars| parameters(vars, &fields.path_of("inject_variables"), diags))
        .unwrap_or_default();
    fields.finish(diags);
    if goal.is_none() && static_utterance.is_none() {
        diags
            .at(node)
            .error(
                Code::G102,
                "a step needs a `goal` (or a `static_utterance` to say)",
            )
            .field(path);
        return None;
    }
    Some(SimulationStep {
        goal: goal.unwrap_or_default(),
        success_criteria,
        response_guide,
        max_turns,
        static_utterance,
        inject_variables,
    })
}

/// A positive whole number of user turns.
fn max_turns(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<u32> {
    let Some(number) = node.as_f64() else {
        node.wrong_type("a number of turns", diags).field(path);
        return None;
    };
    if number.fract() != 0.0 || number < 1.0 || number > f64::from(u32::MAX) {
        diags
            .at(node)
            .error(
                Code::G111,
                format!("`max_turns` must be a whole number of turns from 1, found {number}"),
            )
            .field(path);
        return None;
    }
    Some(number as u32)
}
