-- Helpers shared by the scenarios: waiting, the chat buffer, the wire log, results.
local M = {}
local api = vim.api
M.results = {}
M.failed = false

function M.log(fmt, ...)
  io.stderr:write(("[scenario] " .. fmt .. "\n"):format(...))
end

function M.check(step, ok, evidence)
  table.insert(M.results, { step = step, ok = ok and true or false, evidence = evidence })
  if not ok then M.failed = true end
  M.log("%s %s: %s", ok and "PASS" or "FAIL", step, tostring(evidence))
end

function M.wait(ms, pred, what)
  local ok = vim.wait(ms, pred, 50)
  if not ok then M.log("timed out waiting for %s", what or "?") end
  return ok
end

-- Wire log: lines "HH:MM:SS C> {json}" / "HH:MM:SS A> {json}".
function M.wire()
  local out = {}
  local f = io.open(os.getenv("CC_WIRE_LOG"), "r")
  if not f then return out end
  for line in f:lines() do
    local dir, json = line:match("^%S+ ([CA])> (.*)$")
    if dir then
      local ok, msg = pcall(vim.json.decode, json)
      table.insert(out, { dir = dir, raw = json, msg = ok and msg or nil })
    end
  end
  f:close()
  return out
end

function M.find_wire(pred)
  for _, e in ipairs(M.wire()) do
    if e.msg and pred(e.msg, e.dir) then return e end
  end
end

function M.count_wire(pred)
  local n = 0
  for _, e in ipairs(M.wire()) do
    if e.msg and pred(e.msg, e.dir) then n = n + 1 end
  end
  return n
end

-- The response (agent or client) to a request id sent by the other side.
function M.response_to(method, dir)
  local reqs = {}
  local found = {}
  for _, e in ipairs(M.wire()) do
    local m = e.msg
    if m and m.method == method and m.id ~= nil and e.dir == dir then reqs[tostring(m.id)] = true end
    if m and m.method == nil and m.id ~= nil and e.dir ~= dir and reqs[tostring(m.id)] then
      table.insert(found, e)
    end
  end
  return found
end

function M.requests()
  local out = {}
  local f = io.open(os.getenv("CC_RECORD"), "r")
  if not f then return out end
  for line in f:lines() do
    local ok, r = pcall(vim.json.decode, line)
    if ok then table.insert(out, r) end
  end
  f:close()
  return out
end

function M.buf_text(bufnr)
  return table.concat(api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end

function M.dump(chat, name)
  local path = os.getenv("CC_OUT") .. "/" .. name .. ".chat.md"
  local f = assert(io.open(path, "w"))
  f:write(M.buf_text(chat.bufnr))
  f:close()
end

function M.line_matching(bufnr, pat)
  for _, l in ipairs(api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if l:find(pat) then return l end
  end
end

-- Type a user message below the last "## Me" header and submit it as <CR> would.
function M.submit(chat, text)
  vim.bo[chat.bufnr].modifiable = true
  local lines = vim.split(text, "\n", { plain = true })
  api.nvim_buf_set_lines(chat.bufnr, -1, -1, false, lines)
  chat:submit()
end

function M.idle(chat)
  return chat.current_request == nil and vim.bo[chat.bufnr].modifiable
end

-- Press the chat buffer's keymap with this description (as the user would).
function M.press(bufnr, desc)
  for _, map in ipairs(api.nvim_buf_get_keymap(bufnr, "n")) do
    if map.desc == desc and map.callback then
      M.log("pressing %s (%s)", map.lhs, desc)
      map.callback()
      return map.lhs
    end
  end
end

function M.has_map(bufnr, desc)
  for _, map in ipairs(api.nvim_buf_get_keymap(bufnr, "n")) do
    if map.desc == desc then return true end
  end
  return false
end

function M.notifications(min_level)
  local out = {}
  for _, n in ipairs(_G.NOTIFICATIONS) do
    if (n.level or 0) >= (min_level or vim.log.levels.WARN) then table.insert(out, n.msg) end
  end
  return out
end

function M.finish(name)
  local path = os.getenv("CC_OUT") .. "/" .. name .. ".results.json"
  local f = assert(io.open(path, "w"))
  f:write(vim.json.encode({ results = M.results, notifications = _G.NOTIFICATIONS }))
  f:close()
  vim.cmd(M.failed and "cquit 1" or "qall!")
end

return M
