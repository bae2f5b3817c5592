-- Steps 1-5 against copilot-ls with the fake provider (one chat, one agent process).
local L = dofile(os.getenv("CC_SRC") .. "/lib.lua")
local api = vim.api
local T = 30000

-- 1. Open a chat with the copilot_ls adapter (the docs' default adapter).
local chat = require("codecompanion").chat()
L.check("1 chat opened", chat ~= nil, chat and ("bufnr " .. chat.bufnr) or "nil")
L.wait(T, function() return chat.acp_connection and chat.acp_connection.session_id ~= nil end, "session")
local conn = chat.acp_connection
local init = L.response_to("initialize", "C")[1]
L.check("1 initialize answered", init and init.msg.result and init.msg.result.protocolVersion == 1, init and init.raw:sub(1, 400))
local new = L.response_to("session/new", "C")[1]
L.check("1 session/new answered", new and new.msg.result and new.msg.result.sessionId ~= nil, new and new.raw:sub(1, 600))
local sent_new = L.find_wire(function(m, d) return d == "C" and m.method == "session/new" end)
L.log("session/new sent: %s", sent_new and sent_new.raw or "none")
L.wait(10000, function()
  return #require("codecompanion.interactions.chat.acp.commands").get_commands_for_session(conn.session_id or "") > 0
end, "available commands")
local cmds = require("codecompanion.interactions.chat.acp.commands").get_commands_for_session(conn.session_id or "")
local names = vim.tbl_map(function(c) return c.name end, cmds)
L.check("1 available_commands_update registered by CodeCompanion", #cmds > 0, table.concat(names, ","))
L.check("1 no error notifications after connect", #L.notifications(vim.log.levels.ERROR) == 0,
  table.concat(L.notifications(vim.log.levels.ERROR), " | "))
L.log("agentCapabilities: %s", vim.inspect(conn._agent_info and conn._agent_info.agentCapabilities))
L.log("config options: %s", vim.inspect(conn:get_config_options()))

-- 2. A question: tool call + streamed answer.
L.submit(chat, "Where is the token bucket refilled?")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("refills in", 1, true) end, "answer 1")
L.dump(chat, "fake-1-question")
local ans = L.line_matching(chat.bufnr, "refills in")
L.check("2 streamed answer in chat buffer", ans ~= nil, ans)
local tool_line = L.line_matching(chat.bufnr, "[Ss]earch") or L.line_matching(chat.bufnr, "refill")
L.check("2 tool call shown", L.find_wire(function(m) return m.params and m.params.update and m.params.update.sessionUpdate == "tool_call" end) ~= nil
  and tool_line ~= nil, tool_line)
local rd = L.find_wire(function(m, d) return d == "A" and m.method == "fs/read_text_file" end)
local rd_answer = L.response_to("fs/read_text_file", "A")[1]
local r1 = L.requests()[2]
local read_result
for _, m in ipairs(r1 and r1.body.messages or {}) do if m.role == "tool" and m.tool_call_id == "call-2" then read_result = m.content end end
L.check("2 read_file goes through fs/read_text_file", rd ~= nil and rd_answer and rd_answer.msg.result and tostring(read_result):find("fn refill", 1, true) ~= nil,
  (rd and rd.raw:sub(1, 250) or "no fs/read_text_file") .. " || tool result: " .. tostring(read_result):sub(1, 120))
L.log("read tool line in chat: %s", tostring(L.line_matching(chat.bufnr, "Read")))
local chunks = L.count_wire(function(m) return m.params and m.params.update and m.params.update.sessionUpdate == "agent_message_chunk" end)
L.log("agent_message_chunk count so far: %d", chunks)

-- 3. A follow-up: the provider sees the earlier turns.
L.submit(chat, "And who calls it?")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("called from try_acquire", 1, true) end, "answer 2")
L.dump(chat, "fake-2-followup")
L.check("3 follow-up answer in chat buffer", L.line_matching(chat.bufnr, "called from try_acquire") ~= nil,
  L.line_matching(chat.bufnr, "called from try_acquire"))
local reqs = L.requests()
local last = reqs[#reqs]
local roles = {}
local has_q1, has_a1 = false, false
for _, m in ipairs(last and last.body.messages or {}) do
  table.insert(roles, m.role)
  local c = type(m.content) == "string" and m.content or vim.json.encode(m.content)
  if m.role == "user" and c:find("Where is the token bucket refilled", 1, true) then has_q1 = true end
  if m.role == "assistant" and c:find("refills in", 1, true) then has_a1 = true end
end
L.check("3 history reaches the provider", has_q1 and has_a1, ("request %d roles %s"):format(#reqs, table.concat(roles, ",")))

-- 4. An edit: propose_edit -> session/request_permission -> Accept -> fs/write_text_file.
local target = vim.fn.getcwd() .. "/src/rate_limit.rs"
L.submit(chat, "Mark where the bucket records its refill time.")
L.wait(T, function() return L.has_map(chat.bufnr, "Accept") end, "approval prompt")
L.dump(chat, "fake-3-permission")
local perm = L.find_wire(function(m, d) return d == "A" and m.method == "session/request_permission" end)
L.check("4 session/request_permission received", perm ~= nil, perm and perm.raw:sub(1, 300))
L.check("4 approval prompt in chat", L.line_matching(chat.bufnr, "Proposed edits") ~= nil,
  L.line_matching(chat.bufnr, "Proposed edits") or L.line_matching(chat.bufnr, "Approval"))
L.press(chat.bufnr, "Accept")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("Edit done", 1, true) end, "answer 3")
L.dump(chat, "fake-4-edit")
local perm_answer = L.response_to("session/request_permission", "A")[1]
L.log("permission answer: %s", perm_answer and perm_answer.raw or "none")
local write = L.find_wire(function(m, d) return d == "A" and m.method == "fs/write_text_file" end)
local write_answer = L.response_to("fs/write_text_file", "A")[1]
local content = table.concat(vim.fn.readfile(target), "\n")
L.check("4 fs/write_text_file sent and file written", write ~= nil and content:find("// refill time recorded", 1, true) ~= nil,
  (write and write.raw:sub(1, 200) or "no write") .. " || answer " .. (write_answer and write_answer.raw or "none"))
local r = L.requests()
local tool_results = {}
for _, m in ipairs(r[#r].body.messages) do if m.role == "tool" then table.insert(tool_results, m.content) end end
L.log("tool result the model got: %s", tostring(tool_results[#tool_results]))

-- 4b. A second edit, rejected.
L.submit(chat, "Now also rename capacity.")
L.wait(T, function() return L.has_map(chat.bufnr, "Reject") end, "approval prompt 2")
L.press(chat.bufnr, "Reject")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("Left it", 1, true) end, "answer 4")
L.dump(chat, "fake-5-reject")
r = L.requests()
tool_results = {}
for _, m in ipairs(r[#r].body.messages) do if m.role == "tool" then table.insert(tool_results, m.content) end end
content = table.concat(vim.fn.readfile(target), "\n")
L.check("4b rejected edit not written, model told", not content:find("max_tokens", 1, true)
  and tostring(tool_results[#tool_results]):find("rejected", 1, true) ~= nil, tostring(tool_results[#tool_results]))

-- 5b. An agent slash command (CodeCompanion's trigger is "\", rewritten to "/").
local before = #L.requests()
L.submit(chat, "\\find TokenBucket")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("rate_limit.rs", (#L.buf_text(chat.bufnr) - 2000), true) end, "/find answer")
L.dump(chat, "fake-5b-slash")
local p = L.find_wire(function(m, d) return d == "C" and m.method == "session/prompt" and vim.json.encode(m.params.prompt):find("/find TokenBucket", 1, true) end)
L.check("5 slash command /find sent and answered without a model call", p ~= nil and #L.requests() == before,
  (p and p.raw:sub(1, 200) or "no prompt") .. " | provider requests before/after " .. before .. "/" .. #L.requests())

-- 5c. Model / mode selection as CodeCompanion does it (its model picker calls
-- chat:change_model; its /acp_session_options picker calls set_config_option).
local models = require("codecompanion.interactions.chat.keymaps.change_adapter").list_acp_models(conn)
L.log("list_acp_models: %s", vim.inspect(models))
local ids = vim.tbl_map(function(m) return m.modelId end, (models or {}).availableModels or {})
local other
for _, id in ipairs(ids) do if id ~= (models or {}).currentModelId then other = id end end
L.check("5 the model picker offers the provider's models", vim.tbl_contains(ids, "fake-model-large"),
  ("models offered [%s]"):format(table.concat(ids, ",")))
local chosen = other or "fake-model-large"
local n_before = #L.wire()
chat:change_model({ model = chosen })
local ok_mode = conn:set_config_option("mode", "ask")
vim.wait(1000)
local sent_after = {}
for i, e in ipairs(L.wire()) do
  if i > n_before and e.dir == "C" and e.msg and e.msg.method then table.insert(sent_after, e.raw) end
end
L.check("5 model/mode selectors: CodeCompanion sends session/set_config_option", #sent_after == 2 and ok_mode,
  ("models offered [%s]; sent: %s"):format(table.concat(ids, ","), table.concat(sent_after, " ; ")))
local nreq = #L.requests()
L.submit(chat, "Which model answers now?")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("Model answer", 1, true) end, "answer after model change")
L.dump(chat, "fake-6-model")
local req = L.requests()[nreq + 1]
local tools = {}
for _, t in ipairs(req and req.body.tools or {}) do table.insert(tools, t["function"] and t["function"].name or "?") end
L.check("5 chosen model and ask mode reach the provider", req and req.body.model == chosen and not vim.tbl_contains(tools, "propose_edit"),
  ("model %s, tools %s"):format(req and req.body.model or "?", table.concat(tools, ",")))

-- 5a. Cancel a slow answer.
L.submit(chat, "Explain the whole crate slowly.")
L.wait(T, function() return L.buf_text(chat.bufnr):find("Slowly", 1, true) end, "first slow chunk")
chat:stop()
L.wait(T, function()
  return L.find_wire(function(m, d) return d == "A" and m.result and m.result.stopReason == "cancelled" end) ~= nil
end, "cancelled stopReason")
L.wait(5000, function() return L.idle(chat) end, "idle after cancel")
L.dump(chat, "fake-8-cancel")
local cancel = L.find_wire(function(m, d) return d == "C" and m.method == "session/cancel" end)
local stopped = L.find_wire(function(m, d) return d == "A" and m.result and m.result.stopReason == "cancelled" end)
L.check("5 cancel: session/cancel sent, stopReason cancelled", cancel ~= nil and stopped ~= nil,
  (cancel and cancel.raw or "no cancel") .. " || " .. (stopped and stopped.raw or "no stop"))

-- 5a'. Stop the chat while the permission prompt is up (back in edit mode first).
-- CodeCompanion re-sends a stopped prompt with the next one, so this prompt carries
-- the cancelled "Explain the whole crate slowly." too.
conn:set_config_option("mode", "edit")
local nreq0 = #L.requests()
L.submit(chat, "Rename the project in the README.")
L.wait(T, function() return L.has_map(chat.bufnr, "Accept") end, "approval prompt 3")
chat:stop()
L.wait(T, function()
  return L.count_wire(function(m, d) return d == "A" and m.result and m.result.stopReason == "cancelled" end) >= 2
end, "cancelled at permission")
L.wait(5000, function() return L.idle(chat) end, "idle after stop at permission")
vim.wait(500)
L.dump(chat, "fake-5a-stop-at-permission")
local perm_answers = L.response_to("session/request_permission", "A")
local last_perm = perm_answers[#perm_answers]
local readme = table.concat(vim.fn.readfile(vim.fn.getcwd() .. "/README.md"), "\n")
L.check("5 stop during permission: answered cancelled, nothing written, no further model call",
  last_perm and vim.json.encode(last_perm.msg.result or {}):find("cancelled", 1, true) and not readme:find("renamed", 1, true) and #L.requests() == nreq0 + 1,
  (last_perm and last_perm.raw or "no answer") .. " | provider requests +" .. (#L.requests() - nreq0))

-- Which requests did copilot-ls reject?
local rejected = {}
local by_id = {}
for _, e in ipairs(L.wire()) do
  if e.dir == "C" and e.msg and e.msg.method and e.msg.id ~= nil then by_id[tostring(e.msg.id)] = e.msg.method end
  if e.dir == "A" and e.msg and e.msg.error and e.msg.id ~= nil then
    table.insert(rejected, (by_id[tostring(e.msg.id)] or "?") .. " -> " .. vim.json.encode(e.msg.error))
  end
end
L.check("agent errors (informational)", true, #rejected == 0 and "none" or table.concat(rejected, " | "))
L.check("no error notifications overall", #L.notifications(vim.log.levels.ERROR) == 0,
  table.concat(L.notifications(vim.log.levels.ERROR), " | "))
L.finish("fake")
