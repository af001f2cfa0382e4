//! Every text of the skills tool: what the model reads (its description, parameters, results,
//! the system-prompt section) and the errors of discovery. `prompts=` overrides the model's.

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "tool.desc.skills",
        "Use skills: folders of instructions, scripts and resources for particular tasks. action=list lists the skills (name and description); action=load returns a skill's instructions and the other files in its folder; action=read returns one of those files.",
    ),
    ("tool.param.skills.action", "Operation: list = the available skills / load = a skill's instructions / read = a file of a skill's folder"),
    ("tool.param.skills.name", "For load and read: the skill's name, as listed"),
    ("tool.param.skills.file", "For read: the file's path relative to the skill's folder, as listed by load, e.g. scripts/fill.py"),
    (
        "tool.section.skills",
        "## Skills\nSkills hold instructions for particular tasks. When a task matches a skill's description, first load the skill with the skills tool (action=\"load\", name=...) and follow its instructions. Available skills:\n{skills}",
    ),
    ("tool.msg.skills.item", "- {name}: {description}"),
    ("tool.msg.skills.list", "Available skills (load one with action=\"load\", name=...):\n{skills}"),
    ("tool.msg.skills.none", "(no skills are available)"),
    (
        "tool.msg.skills.loaded",
        "Skill {name}:\n\n{body}",
    ),
    (
        "tool.msg.skills.files",
        "\n\nFiles in this skill's folder (read one with action=\"read\", name=\"{name}\", file=...):\n{files}",
    ),
    ("tool.msg.skills.more_files", "- …and {n} more"),
    ("tool.msg.skills.truncated", "\n…(truncated, over {max} characters)"),
    ("tool.msg.skills.bad_action", "Error: action must be list / load / read, got {action}"),
    ("tool.msg.skills.no_name", "Error: action={action} needs the skill's name"),
    ("tool.msg.skills.unknown", "Error: there is no skill named {name}; available skills: {names}"),
    ("tool.msg.skills.no_file", "Error: action=read needs file, a path relative to the skill's folder (see action=load)"),
    ("tool.msg.skills.path_escape", "Error: file {file} is out of bounds; only files inside the folder of skill {name} can be read"),
    (
        "tool.msg.skills.bad_path",
        "Error: file {file} is not accepted: use plain names separated by single '/' (no empty or hidden components, no control characters, at most 32 levels and 1024 bytes)",
    ),
    ("tool.msg.skills.missing", "Error: skill {name} has no file {file}"),
    ("tool.msg.skills.not_regular", "Error: {file} of skill {name} is not a regular file with a single link; refused"),
    ("tool.msg.skills.read_failed", "Error: failed to read {file} of skill {name} ({err})"),
    ("tool.msg.skills.moved", "Error: the folder of skill {name} was replaced or removed since the skills were discovered"),
    ("tool.msg.skills.changed", "Error: the SKILL.md of skill {name} no longer has valid front matter ({err})"),
];

// Discovery errors (raised to the program that builds the tool, never read by the model).
pub const ERR_PATH: &str = "skills path {path} is not a directory ({err})";
pub const ERR_READ: &str = "{file}: cannot be read ({err})";
pub const ERR_TOO_LARGE: &str = "{file}: larger than {max} bytes";
pub const ERR_UTF8: &str = "{file}:{line}: not UTF-8 (invalid byte at column {column})";
pub const ERR_NO_FRONT_MATTER: &str =
    "{file}:1: missing front matter: the file must start with a line '---', then YAML with name and description, then a line '---'";
pub const ERR_UNCLOSED: &str =
    "{file}:1: the front matter opened here is never closed by a line '---'";
pub const ERR_YAML: &str = "{file}:{line}: malformed front matter: {err}";
pub const ERR_NOT_MAPPING: &str =
    "{file}:2: malformed front matter: expected `key: value` lines, got {kind}";
pub const ERR_NO_NAME: &str = "{file}:1: the front matter has no name";
pub const ERR_BAD_NAME: &str =
    "{file}:{line}: bad name {name}: use 1 to 64 lowercase letters, digits and hyphens";
pub const ERR_NO_DESCRIPTION: &str = "{file}:{line}: the front matter has no description";
pub const ERR_LONG_DESCRIPTION: &str =
    "{file}:{line}: the description has {n} characters; at most 1024 are allowed";
pub const ERR_BAD_TRIGGERS: &str = "{file}:{line}: triggers must be a list of strings";
pub const ERR_NOT_STRING: &str = "{file}:{line}: {key} must be a string, got {kind}";
pub const ERR_DUPLICATE: &str = "two skills are named {name}: {first} and {second}";
pub const ERR_MORE: &str = "…and {n} more problems";
