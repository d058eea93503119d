// Package agent is the assistant of PKU harness (docs/HOST-API.md "Conversations (the assistant)"; seed 003
// "测试 → 模拟模型", "工具与 schema", "让 AI 帮你写插件", "界面扩展 →
// 快捷指令"): it talks to any OpenAI-compatible model and answers the
// person with every enabled plugin's tools. It sits above package host,
// which knows nothing of models.
//
//   - Providers: Provider, and OpenAI on github.com/openai/openai-go/v3
//     (streaming, tool calls, retries honouring Retry-After, timeouts,
//     cancellation; it tolerates reasoning_content, a JSON reply to a
//     streaming request, arguments split across chunks, calls interleaved
//     by index, finish_reason length). Config, LoadConfig and SaveConfig
//     keep `harness model set` in the data directory; Presets lists the
//     services students here use.
//   - The loop: Agent.Turn builds the system prompt (Preamble, then each
//     plugin's instructions in a stable order; per turn the Beijing time
//     and the built-ins' context() blocks as data), offers the tools
//     (host.ModelName, PlainSchema; userOnly never, onDemand only after
//     plugins__use), runs every call through host.Host.Call as the agent,
//     asks the Person for confirmations and for verification_required or
//     needs_input, sends untrusted results as data, and stops at the step
//     limit or the token budget, naming it.
//   - Conversations: messages, tool calls and results, confirmations and
//     usage in the host database (migration 400).
//   - Commands: the / menu of every plugin's commands.
//
// Package agent/mock is the mock model, agent/agentapi the HTTP routes
// (Server-Sent Events), agent/builtins the assistant's own built-ins.
package agent
