-- Steps 1-2 with COPILOT_LS_PROVIDER=none: the agent answers from its own search.
local L = dofile(os.getenv("CC_SRC") .. "/lib.lua")
local T = 30000
local chat = require("codecompanion").chat()
L.wait(T, function() return chat.acp_connection and chat.acp_connection.session_id ~= nil end, "session")
L.check("1 (none) session established", chat.acp_connection and chat.acp_connection.session_id ~= nil,
  chat.acp_connection and chat.acp_connection.session_id)
L.submit(chat, "Where is the token bucket refilled?")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("rate_limit.rs", 1, true) end, "no-model answer")
L.dump(chat, "none-1-question")
local cite = L.line_matching(chat.bufnr, "rate_limit%.rs:%d")
L.check("2 (none) answer with path:line citations", cite ~= nil, cite)
L.submit(chat, "\\outline src/rate_limit.rs")
L.wait(T, function() return L.idle(chat) and L.buf_text(chat.bufnr):find("try_acquire", 1, true) end, "/outline")
L.dump(chat, "none-2-outline")
L.check("2 (none) /outline command answered", L.line_matching(chat.bufnr, "try_acquire") ~= nil, L.line_matching(chat.bufnr, "try_acquire"))
L.check("no error notifications overall", #L.notifications(vim.log.levels.ERROR) == 0,
  table.concat(L.notifications(vim.log.levels.ERROR), " | "))
L.finish("none")
