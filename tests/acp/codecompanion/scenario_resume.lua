-- Step 5: /resume in a new Neovim (new agent process): session/list + session/load, then a follow-up.
local L = dofile(os.getenv("CC_SRC") .. "/lib.lua")
local T = 30000
local chat = require("codecompanion").chat()
L.wait(T, function() return chat.acp_connection and chat.acp_connection.session_id ~= nil end, "session")
local conn = chat.acp_connection
local caps = conn._agent_info and conn._agent_info.agentCapabilities or {}
L.check("5 resume: agent advertises list+load", conn:can_list_sessions() and conn:can_load_session(),
  vim.json.encode({ loadSession = caps.loadSession, sessionCapabilities = caps.sessionCapabilities }))
local enabled, why = require("codecompanion.interactions.chat.slash_commands.builtin.resume").enabled(chat)
L.check("5 resume: /resume enabled", enabled, why)

local picked
vim.ui.select = function(items, opts, on_choice)
  L.log("vim.ui.select %s: %s", opts.prompt, vim.inspect(items))
  for i, item in ipairs(items) do
    if item:find("Where is the token bucket refilled", 1, true) then picked = item; return on_choice(item, i) end
  end
  on_choice(nil, nil)
end
local Resume = require("codecompanion.interactions.chat.slash_commands.builtin.resume")
Resume.new({ Chat = chat, config = {}, context = {} }):execute()
L.wait(T, function() return L.buf_text(chat.bufnr):find("refills in", 1, true) end, "replayed conversation")
L.dump(chat, "resume-1-loaded")
local list = L.response_to("session/list", "C")[1]
local load = L.find_wire(function(m, d) return d == "C" and m.method == "session/load" end)
local load_answer = L.response_to("session/load", "C")[1]
L.check("5 resume: session/list answered, picker shows first question", list and list.msg.result and picked ~= nil,
  (picked or "nothing picked") .. " || " .. (list and list.raw:sub(1, 300) or "no list"))
L.check("5 resume: session/load replayed into the chat", load_answer and load_answer.msg.result and L.line_matching(chat.bufnr, "refills in") ~= nil,
  (load and load.raw:sub(1, 250) or "no load") .. " || " .. (load_answer and load_answer.raw:sub(1, 200) or "no answer"))
L.log("title: %s", tostring(chat.title))

vim.bo[chat.bufnr].modifiable = true
L.wait(5000, function() return L.idle(chat) end, "idle after load")
L.submit(chat, "Summarise what we discussed.")
local function after_summary()
  local t = L.buf_text(chat.bufnr)
  local i = t:find("Summarise what we discussed.", 1, true)
  return i and t:find("Resumed answer", i, true)
end
L.wait(T, function() return L.idle(chat) and after_summary() end, "answer after resume")
L.dump(chat, "resume-2-followup")
local reqs = L.requests()
local last = reqs[#reqs]
local has_q1 = false
for _, m in ipairs(last.body.messages) do
  local c = type(m.content) == "string" and m.content or vim.json.encode(m.content)
  if m.role == "user" and c:find("Where is the token bucket refilled", 1, true) then has_q1 = true end
end
L.check("5 resume: follow-up after load answered with old history", after_summary() ~= nil and has_q1,
  ("provider request %d has first question: %s"):format(#reqs, tostring(has_q1)))
-- A provider failure is shown in the chat.
L.submit(chat, "Try once more.")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("scripted outage", 1, true) end, "provider error")
L.dump(chat, "resume-3-error")
local err = L.find_wire(function(m, d) return d == "A" and m.error and m.id ~= nil end)
L.check("provider failure shown in chat", L.line_matching(chat.bufnr, "scripted outage") ~= nil,
  (L.line_matching(chat.bufnr, "scripted outage") or "") .. " || " .. (err and err.raw or "no error reply"))
_G.NOTIFICATIONS = vim.tbl_filter(function(n) return not n.msg:find("scripted outage", 1, true) end, _G.NOTIFICATIONS)
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
L.finish("resume")
