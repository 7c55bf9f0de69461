// Every tool but those that only read goes to the gate (the shell too: before it, team mode keeps
// the files other sessions hold): an unknown tool naming a path is a write.
const READ_ONLY = new Set(["read", "glob", "grep", "list", "webfetch", "todoread", "todowrite", "task"]);
