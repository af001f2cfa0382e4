//! The PyO3 binding: builds the `agentmaker._native` extension module.

mod agent_tool;
mod bridge;
mod calculator;
mod cli;
mod convert;
mod coroutines;
mod docstring;
mod errors;
mod executor;
mod fetch;
mod guard;
mod hooks;
mod isolation;
mod llm;
mod mcp;
mod mcp_server;
mod messages;
mod names;
mod net;
mod notes;
mod parameter;
mod permissions;
mod rag;
mod registry;
mod render;
mod response;
mod run_policy;
mod search;
mod settings;
mod skills;
mod todos;
mod tool;
mod user_input;
mod workspace;

use pyo3::prelude::*;

/// The process's one tokio runtime ([`crate::runtime::shared`]).
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    // As tokio's own runtime constructors do: a process that cannot start threads cannot run
    // anything of the binding's.
    crate::runtime::shared().expect("agentmaker could not start its tokio runtime")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<response::PyToolResponse>()?;
    m.add_class::<parameter::PyToolParameter>()?;
    m.add_class::<tool::PyTool>()?;
    m.add_class::<mcp::PyMcpClient>()?;
    m.add_class::<mcp::PyMcpTool>()?;
    m.add_class::<mcp_server::PyMcpServer>()?;
    bridge::register_exit_hook(m)?;
    m.add_function(wrap_pyfunction!(hooks::_install_hooks, m)?)?;
    // The key under which a run hands tools their part of it: one spelling for both sides.
    m.add("_RUN_KEY", crate::tool::RUN_KEY)?;
    m.add_class::<calculator::PyCalculatorTool>()?;
    m.add_class::<search::PySearchTool>()?;
    m.add_class::<cli::PyCliTool>()?;
    m.add_class::<notes::PyNotesTool>()?;
    m.add_class::<workspace::PyWorkspaceTool>()?;
    m.add_class::<fetch::PyFetchTool>()?;
    m.add_function(wrap_pyfunction!(workspace::_workspace_tools, m)?)?;
    m.add_class::<skills::PySkillsTool>()?;
    m.add_class::<user_input::PyUserInputTexts>()?;
    m.add_class::<todos::PyTodoTexts>()?;
    m.add_class::<agent_tool::PyAgentToolTexts>()?;
    m.add_class::<registry::PyToolRegistry>()?;
    m.add_class::<executor::PyCallPipeline>()?;
    m.add_class::<registry::PyStartedCall>()?;
    m.add_class::<permissions::PyToolPermissions>()?;
    m.add_class::<guard::PyGuard>()?;
    m.add_class::<run_policy::PyRunBudget>()?;
    m.add_class::<rag::PyBm25Index>()?;
    m.add_class::<rag::PyDenseIndex>()?;
    m.add_function(wrap_pyfunction!(run_policy::check_run_limits, m)?)?;
    m.add_function(wrap_pyfunction!(docstring::parse_docstring, m)?)?;
    m.add_function(wrap_pyfunction!(render::render_strict_schema, m)?)?;
    m.add_function(wrap_pyfunction!(render::render_gemini_schema, m)?)?;
    m.add_function(wrap_pyfunction!(registry::_tool_result, m)?)?;
    m.add_function(wrap_pyfunction!(messages::_async_in_running_loop_text, m)?)?;
    m.add_function(wrap_pyfunction!(messages::_serve_failed_text, m)?)?;
    m.add_function(wrap_pyfunction!(messages::_validation_failed_text, m)?)?;
    m.add_function(wrap_pyfunction!(messages::_result_not_json_text, m)?)?;
    m.add_function(wrap_pyfunction!(names::tool_name_problem, m)?)?;
    m.add_function(wrap_pyfunction!(net::_is_loopback_url, m)?)?;
    m.add_function(wrap_pyfunction!(isolation::_enter_worker, m)?)?;
    m.add_function(wrap_pyfunction!(isolation::_limit_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(isolation::_isolation_text, m)?)?;
    m.add_class::<llm::PyLlmEndpoint>()?;
    m.add_class::<llm::PyLlmStream>()?;
    m.add_function(wrap_pyfunction!(llm::_parse_llm_reply, m)?)?;
    m.add_function(wrap_pyfunction!(convert::_time_conversion, m)?)?;
    Ok(())
}
