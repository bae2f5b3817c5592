-- One `copilot/ask` at a time: building AskParams, following its progress and its
-- streamed answer (AskDelta on the partialResultToken), cancelling it, and handing the
-- result to the thread window and the quickfix list.
local answer = require('copilot_ls.answer')
local client_mod = require('copilot_ls.client')
local config = require('copilot_ls.config')
local errors = require('copilot_ls.errors')
local quickfix = require('copilot_ls.quickfix')
local roots = require('copilot_ls.roots')
local track = require('copilot_ls.track')

local M = {}

---@class copilot_ls.Ask
---@field question string
---@field conversation_id string
---@field status 'waiting'|'done'|'error'|'cancelled'
---@field progress string[] progress messages, oldest first
---@field phase 'server'|'model'|'tool' what it waits for: copilot-ls (before the server
--- began it), the model, or a tool call it runs
---@field token string the workDoneToken
---@field partial_token string the partialResultToken the answer streams on
---@field turns table<integer, {text: string, steps: table[]}> streamed model turns
---@field thread table[] the asks of its conversation, oldest first (shared)
---@field deltas integer AskDeltas received
---@field delta_ms number[] per delta: ms from its arrival to the buffer holding it
---@field delta_at integer[] per delta: vim.uv.hrtime() once the buffer holds it
---@field cleared? boolean :CopilotClear removed its diagnostics
---@field roots string[] the server's roots (its workspace folders) as it answered: a
--- `<root name>/<path>` in the answer's text is a file of one of them
---@field source_win integer the window the question came from
---@field bufnr integer the buffer the question came from
---@field client_id integer?
---@field request_id integer?
---@field params table? the AskParams sent
---@field result table? AskResult
---@field error string? the one-line error shown

---@type copilot_ls.Ask? the last ask, running or finished
M.last = nil
---@type copilot_ls.Ask? the last ask with a result: the server's diagnostics are its
M.current_answer = nil
---@type {bufnr: integer, source_win: integer}? where the last ask came from, kept by
--- :CopilotClear (which forgets the ask itself)
M.origin = nil
-- partialResultToken -> the ask streaming on it
local partials = {}

local counter = 0

local function new_id(kind)
  counter = counter + 1
  return ('nvim-%s-%d-%d-%d'):format(kind, vim.fn.getpid(), vim.uv.hrtime() % 1e9, counter)
end

---@param line string
---@param col integer byte column
---@param encoding string
local function to_character(line, col, encoding)
  col = math.min(col, #line)
  if encoding == 'utf-8' then
    return col
  end
  return vim.str_utfindex(line, encoding, col, false)
end

---@class copilot_ls.Selection byte positions, 0-based rows, end exclusive
---@field start_row integer
---@field start_col integer
---@field end_row integer
---@field end_col integer

--- The selection of lines line1..line2 of bufnr. When they are the lines of the last
--- characterwise visual selection, it is that selection's exact characters; otherwise it
--- covers the whole lines. Must run while bufnr is current: visualmode() is per buffer.
---@param bufnr integer
---@param line1 integer 1-based
---@param line2 integer 1-based
---@return copilot_ls.Selection
function M.capture_selection(bufnr, line1, line2)
  local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ''
  local selection = { start_row = line1 - 1, start_col = 0, end_row = line2 - 1, end_col = #last }
  local mark_start = vim.api.nvim_buf_get_mark(bufnr, '<')
  local mark_end = vim.api.nvim_buf_get_mark(bufnr, '>')
  if mark_start[1] == line1 and mark_end[1] == line2 and vim.fn.visualmode() == 'v' then
    selection.start_col = mark_start[2]
    if mark_end[2] < #last then
      -- '> points at the first byte of the last selected character; include all of it.
      selection.end_col = mark_end[2] + 1 + vim.str_utf_end(last, mark_end[2] + 1)
    end
  end
  return selection
end

--- The selection as an LSP Range in the client's position encoding (known only once the
--- server has answered `initialize`).
---@param bufnr integer
---@param selection copilot_ls.Selection
---@param encoding string
---@return lsp.Range
function M.to_range(bufnr, selection, encoding)
  local function line(row)
    return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  end
  return {
    start = {
      line = selection.start_row,
      character = to_character(line(selection.start_row), selection.start_col, encoding),
    },
    ['end'] = {
      line = selection.end_row,
      character = to_character(line(selection.end_row), selection.end_col, encoding),
    },
  }
end

local function notify_error(message)
  vim.notify(message, vim.log.levels.ERROR)
end

--- Neovim drops the callbacks of a client that exits, so an ask whose server died would
--- wait forever; this ends it with an error instead.
---@param ask copilot_ls.Ask?
local function end_if_server_gone(ask)
  if not (ask and ask.status == 'waiting' and ask.client_id) then
    return
  end
  local client = vim.lsp.get_client_by_id(ask.client_id)
  if client and not client:is_stopped() then
    return
  end
  ask.status = 'error'
  ask.error = 'copilot-ls: the server stopped during the question (fix: see :LspLog)'
  answer.render(ask)
  notify_error(ask.error)
end

---@return boolean
function M.is_running()
  end_if_server_gone(M.last)
  return M.last ~= nil and M.last.status == 'waiting'
end

---@param ask copilot_ls.Ask
---@param err table|string a JSON-RPC error, or a line already made for the user
local function on_error(ask, err)
  local message = type(err) == 'string' and err or errors.format(err, config.options)
  ask.status = 'error'
  ask.error = message
  answer.render(ask)
  -- Draw the window's error before the notification: should the message still need a
  -- hit-enter prompt, the window behind it no longer says "Waiting…".
  vim.cmd.redraw()
  -- The window has the whole message; the notification fits the command line.
  notify_error(
    type(err) == 'string' and err or errors.short(err, config.options, math.max(vim.v.echospace, 40))
  )
end

---@param ask copilot_ls.Ask
---@param result table
local function on_result(ask, result)
  ask.status = 'done'
  ask.result = result
  -- The roots the answer's paths were named after; later changes to the folders do not
  -- rename them.
  local client = vim.lsp.get_client_by_id(ask.client_id)
  if client and #roots.dirs(client) > 0 then
    ask.roots = roots.dirs(client)
  end
  partials[ask.partial_token] = nil
  -- The server's diagnostics now belong to this answer (they replace the previous ones),
  -- though the previous answer's may still be in the buffers a moment (track.lua).
  ask.replaced = track.citation_messages(M.current_answer)
  M.current_answer = ask
  -- Keep the server's id: it is the one a follow-up must reuse.
  ask.conversation_id = result.conversationId or ask.conversation_id
  local was_open = answer.is_open()
  answer.render(ask)
  if config.options.quickfix then
    quickfix.set(ask)
  end
  if not was_open then
    -- The user closed the window while waiting: respect that, but say where it went.
    vim.notify('copilot-ls: answered; :CopilotAnswer shows it', vim.log.levels.INFO)
  end
end

--- What an ask waits for once the server began it (its progress `begin`, "Thinking"):
--- the model, unless setup() said there is none (a no-model answer asks none).
---@return 'server'|'model'
local function phase_once_begun()
  return config.options.provider == 'none' and 'server' or 'model'
end

-- Progress on our token goes into the waiting window. One autocmd for all asks. The
-- server sends `begin` when it takes the question up (before that the ask may wait for
-- the server to start or for its turn), a report as each tool call starts, and the
-- workspace's instruction files as a report just before the first model call.
local ask_group = vim.api.nvim_create_augroup('copilot_ls.ask', { clear = true })
vim.api.nvim_create_autocmd('LspProgress', {
  group = ask_group,
  callback = function(ev)
    local ask = M.last
    local params = ev.data and ev.data.params
    if not (ask and params and ask.status == 'waiting' and params.token == ask.token) then
      return
    end
    local value = params.value
    if type(value) ~= 'table' then
      return
    end
    if value.kind == 'begin' and ask.phase == 'server' then
      ask.phase = phase_once_begun()
      answer.render(ask)
    elseif value.kind == 'report' and value.message then
      table.insert(ask.progress, value.message)
      ask.phase = value.message:match('^Instructions: ') and phase_once_begun() or 'tool'
      answer.render(ask)
    end
  end,
})

--- A `$/progress` on a partialResultToken of ours: one AskDelta (PROTOCOL.md section 3).
--- Appends its text to its turn, or its step, and shows it at once. Returns false for
--- any other token, which Neovim's own handler then takes.
---@param params table
---@return boolean handled
function M.on_partial(params)
  local ask = params and partials[params.token]
  if not ask then
    return false
  end
  local arrived = vim.uv.hrtime()
  local value = params.value
  if ask.status ~= 'waiting' or type(value) ~= 'table' then
    return true
  end
  local n = tonumber(value.turn) or 1
  local turn = ask.turns[n]
  if not turn then
    turn = { text = '', steps = {} }
    ask.turns[n] = turn
  end
  if type(value.text) == 'string' then
    turn.text = turn.text .. value.text
  end
  if type(value.step) == 'table' then
    table.insert(turn.steps, value.step)
    -- The tool call is over: the model is asked again.
    ask.phase = phase_once_begun()
  end
  ask.deltas = ask.deltas + 1
  if M.last == ask then
    answer.render(ask)
  end
  local shown = vim.uv.hrtime()
  table.insert(ask.delta_ms, (shown - arrived) / 1e6)
  table.insert(ask.delta_at, shown)
  return true
end

-- The server republishes the answer's diagnostics as the documents change: the thread's
-- citation lines, its edits' state and the quickfix list follow. Coalesced per tick.
local refresh_pending = false
vim.api.nvim_create_autocmd('DiagnosticChanged', {
  group = ask_group,
  callback = function(ev)
    local ask = M.current_answer
    if not ask or refresh_pending or not vim.api.nvim_buf_is_valid(ev.buf) then
      return
    end
    local name = vim.api.nvim_buf_get_name(ev.buf)
    if name == '' or not track.uris(ask)[vim.uri_from_fname(name)] then
      return
    end
    refresh_pending = true
    vim.schedule(function()
      refresh_pending = false
      if answer.thread and vim.tbl_contains(answer.thread, ask) then
        answer.refresh()
      end
      if config.options.quickfix then
        quickfix.update(ask)
      end
    end)
  end,
})

vim.api.nvim_create_autocmd('LspDetach', {
  group = ask_group,
  callback = function(ev)
    local ask = M.last
    if ask and ev.data and ev.data.client_id == ask.client_id then
      -- Detach comes before the client is gone; look once it has.
      vim.schedule(function()
        end_if_server_gone(ask)
      end)
    end
  end,
})

---@class copilot_ls.AskOpts
---@field follow_up? boolean reuse the last conversation
---@field range? {[1]: integer, [2]: integer} 1-based first and last line of a selection
---@field bufnr? integer the buffer asked from (default: current)

--- Sends a question. Returns the ask, or nil when it could not be sent (already notified).
---@param question string
---@param opts? copilot_ls.AskOpts
---@return copilot_ls.Ask?
function M.send(question, opts)
  opts = opts or {}
  if M.is_running() then
    vim.notify(
      'copilot-ls: a question is still running; wait for it or :CopilotStop',
      vim.log.levels.WARN
    )
    return nil
  end
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  -- The ask before, or (after :CopilotClear) where it was asked from.
  local previous = M.last or M.origin
  if bufnr == answer.bufnr then
    -- Asking from the answer window is about the previous document, not this scratch.
    bufnr = previous and previous.bufnr or bufnr
  end
  local client, err = client_mod.get(bufnr)
  if not client then
    notify_error(err)
    return nil
  end

  local conversation_id, thread
  if opts.follow_up and M.last then
    conversation_id = M.last.conversation_id
    thread = M.last.thread
  else
    conversation_id = new_id('conversation')
  end
  thread = thread or {}

  local selection
  if opts.range and client_mod.is_file_buffer(bufnr) then
    selection = M.capture_selection(bufnr, opts.range[1], opts.range[2])
  end

  local source_win = vim.api.nvim_get_current_win()
  if source_win == answer.winid then
    source_win = previous and previous.source_win or source_win
  end

  ---@type copilot_ls.Ask
  local ask = {
    question = question,
    conversation_id = conversation_id,
    status = 'waiting',
    progress = {},
    phase = 'server',
    token = new_id('progress'),
    partial_token = new_id('partial'),
    turns = {},
    thread = thread,
    deltas = 0,
    delta_ms = {},
    delta_at = {},
    roots = #roots.dirs(client) > 0 and roots.dirs(client) or { config.root_dir(bufnr) },
    source_win = source_win,
    bufnr = bufnr,
    client_id = client.id,
  }
  M.last = ask
  table.insert(thread, ask)
  partials[ask.partial_token] = ask
  answer.render(ask, true)

  client_mod.when_ready(client, function(ready, ready_err)
    if M.last ~= ask or ask.status ~= 'waiting' then
      return
    end
    if not ready then
      on_error(ask, ready_err)
      return
    end
    local params = {
      question = question,
      conversationId = conversation_id,
      workDoneToken = ask.token,
      partialResultToken = ask.partial_token,
    }
    if client_mod.is_file_buffer(bufnr) then
      params.textDocument = { uri = vim.uri_from_bufnr(bufnr) }
      if selection then
        params.range = M.to_range(bufnr, selection, ready.offset_encoding)
      end
    end
    ask.params = params
    local ok, request_id = ready:request('copilot/ask', params, function(rpc_err, result)
      -- A reply to an ask that was stopped or replaced is no longer the user's concern.
      if M.last ~= ask or ask.status ~= 'waiting' then
        return
      end
      ask.request_id = nil
      if rpc_err then
        if rpc_err.code == errors.codes.request_cancelled then
          ask.status = 'cancelled'
          answer.render(ask)
        else
          on_error(ask, rpc_err)
        end
        return
      end
      on_result(ask, result or {})
    end, bufnr)
    if not ok then
      on_error(ask, 'copilot-ls: the server has stopped (fix: see :LspLog)')
      return
    end
    ask.request_id = request_id
  end)
  return ask
end

--- Cancels the running ask (:CopilotStop). The server answers -32800, which Neovim's RPC
--- layer swallows: the ask simply ends, with no error for the user.
---@return boolean stopped
---@param ask copilot_ls.Ask a running ask
local function cancel(ask)
  ask.status = 'cancelled'
  local client = ask.client_id and vim.lsp.get_client_by_id(ask.client_id)
  if client and ask.request_id then
    client:cancel_request(ask.request_id)
  end
  ask.request_id = nil
end

function M.stop()
  local ask = M.last
  if not (ask and ask.status == 'waiting') then
    vim.notify('copilot-ls: no question is running', vim.log.levels.INFO)
    return false
  end
  cancel(ask)
  answer.render(ask)
  return true
end

--- Forgets the conversation on the server and its diagnostics (:CopilotClear).
---@param bufnr? integer
function M.clear(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local clients = vim.lsp.get_clients({ name = config.server_name })
  if #clients == 0 then
    vim.notify('copilot-ls: the server is not running; nothing to clear', vim.log.levels.INFO)
    return
  end
  for _, client in ipairs(clients) do
    client:request('workspace/executeCommand', { command = 'copilot.clear' }, function(err)
      if err then
        notify_error(errors.format(err, config.options))
      end
    end, bufnr)
  end
  if M.last and M.last.status == 'waiting' then
    -- Its reply would belong to the conversation being forgotten.
    cancel(M.last)
  end
  if M.current_answer then
    -- Its diagnostics are gone: its citations keep their last lines, its edits are over.
    M.current_answer.cleared = true
  end
  -- The next question, :CopilotFollowUp or typed at the bottom, starts a new
  -- conversation in a new thread: the server forgot this one, so the screen does too.
  if M.last then
    M.origin = { bufnr = M.last.bufnr, source_win = M.last.source_win }
  end
  M.last = nil
  M.current_answer = nil
  answer.clear()
end

return M
