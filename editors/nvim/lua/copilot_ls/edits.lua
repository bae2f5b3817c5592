-- Suggested edits in the thread: their state (offered, applied, rejected, withdrawn),
-- their diff against the document's text now, and accepting one through the server's
-- code action (textDocument/codeAction, then the WorkspaceEdit applied as
-- workspace/applyEdit would, with vim.lsp.util.apply_workspace_edit).
local track = require('copilot_ls.track')

local M = {}

---@param ask table
---@param index integer
---@return table? edit
local function edit_of(ask, index)
  return ask.result and ask.result.edits and ask.result.edits[index]
end

--- The first text edit of a SuggestedEdit's WorkspaceEdit, and whether it creates a file.
---@param edit table
---@return table? text_edit
---@return boolean creates
local function text_edit_of(edit)
  local workspace_edit = edit.edit or {}
  local creates = false
  for _, change in ipairs(workspace_edit.documentChanges or {}) do
    if change.kind == 'create' then
      creates = true
    elseif change.edits and change.textDocument and change.textDocument.uri == edit.uri then
      return change.edits[1], creates
    end
  end
  local edits = (workspace_edit.changes or {})[edit.uri]
  return edits and edits[1], creates
end

--- The model's old and new text of a SuggestedEdit, from the propose_edit step that made
--- it: by path and title, else (each successful call makes one edit) by order.
---@param ask table
---@param index integer
---@return {old: string, new: string}?
local function proposed(ask, index)
  local edit = edit_of(ask, index)
  local proposals = vim.tbl_filter(function(step)
    return step.tool == 'propose_edit' and step.ok ~= false and type(step.arguments) == 'table'
  end, ask.result and ask.result.steps or {})
  local named = vim.tbl_filter(function(step)
    return step.arguments.path == edit.path and step.arguments.title == edit.title
  end, proposals)
  local step = #named == 1 and named[1]
    or (#proposals == #ask.result.edits and proposals[index])
    or nil
  local args = step and step.arguments
  if args and type(args.old_text) == 'string' and type(args.new_text) == 'string' then
    return { old = args.old_text, new = args.new_text }
  end
  return nil
end

---@param haystack string
---@param needle string
---@return integer
local function count(haystack, needle)
  local n, init = 0, 1
  while needle ~= '' do
    local s, e = haystack:find(needle, init, true)
    if not s then
      break
    end
    n, init = n + 1, e + 1
  end
  return n
end

---@param uri string
---@return string[]
local function document_lines(uri)
  local buf = track.buffer_of(uri)
  local fname = vim.uri_to_fname(uri)
  if buf and vim.api.nvim_buf_is_loaded(buf) then
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  if vim.fn.filereadable(fname) == 1 then
    return vim.fn.readfile(fname)
  end
  return {}
end

--- Whether the document shows the edit applied, by the server's own rule (it retires an
--- edit so): its old text gone and its new text there, or, for a new text that holds the
--- old (a comment added above a line), the new text standing around the old.
---@param ask table
---@param index integer
---@return boolean
local function applied_in_document(ask, index)
  local edit = edit_of(ask, index)
  local texts = edit and proposed(ask, index)
  if not texts or texts.old == '' then
    return false
  end
  local text = table.concat(document_lines(edit.uri), '\n') .. '\n'
  local olds = count(text, texts.old)
  if olds == 0 then
    return text:find(texts.new, 1, true) ~= nil
  end
  local inner = texts.new:find(texts.old, 1, true)
  if olds == 1 and inner then
    local from = text:find(texts.old, 1, true) - inner + 1
    return from >= 1 and text:sub(from, from + #texts.new - 1) == texts.new
  end
  return false
end

--- The edit's state and its current 1-based line.
---@param ask table
---@param index integer
---@return string state 'offered'|'applied'|'rejected'|'withdrawn'
---@return integer? lnum
function M.state(ask, index)
  local edit = edit_of(ask, index)
  ask.edit_states = ask.edit_states or {}
  local text_edit = edit and text_edit_of(edit)
  local lnum = text_edit and text_edit.range and text_edit.range.start.line + 1 or nil
  local state = ask.edit_states[index]
  if state == 'applied' or state == 'rejected' then
    return state, ask.edit_lines and ask.edit_lines[index] or lnum
  end
  if not edit then
    return 'withdrawn', lnum
  end
  if not track.is_current(ask) then
    -- A newer answer's diagnostics replaced this one's; an edit applied before that
    -- still reads so.
    local applied = state == 'seen' and applied_in_document(ask, index)
    return applied and 'applied' or 'withdrawn', ask.edit_lines and ask.edit_lines[index] or lnum
  end
  ask.edit_lines = ask.edit_lines or {}
  local d = track.edit_diagnostic(edit)
  if d then
    ask.edit_states[index] = 'seen'
    ask.edit_lines[index] = d.lnum + 1
    -- Where it sat when the AskResult's WorkspaceEdit was made: later moves shift it.
    ask.edit_anchors = ask.edit_anchors or {}
    ask.edit_anchors[index] = ask.edit_anchors[index] or d.lnum
    return 'offered', d.lnum + 1
  end
  -- Gone after it was seen: the server withdrew it, because it was applied (here, with
  -- vim.lsp.buf.code_action() or by hand: the document says so) or its text changed (an
  -- applied edit that was undone is never offered again either). Never seen: its
  -- diagnostic may simply not have arrived yet.
  if state == 'seen' then
    return applied_in_document(ask, index) and 'applied' or 'withdrawn',
      ask.edit_lines[index] or lnum
  end
  return 'offered', lnum
end


---@param line string
---@param character integer
---@param encoding string
---@return integer byte index
local function byte_of(line, character, encoding)
  if encoding == 'utf-8' then
    return math.min(character, #line)
  end
  local ok, index = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and index or #line
end

--- The edit as '-' and '+' lines against the document's text now, with the lines both
--- share left out. Nil when it cannot be placed.
---@param ask table
---@param index integer
---@param encoding? string the client's position encoding
---@return string[]?
function M.diff(ask, index, encoding)
  local edit = edit_of(ask, index)
  if not edit then
    return nil
  end
  local text_edit, creates = text_edit_of(edit)
  if not text_edit then
    return nil
  end
  local new_text = text_edit.newText or ''
  if creates then
    return vim.tbl_map(function(l)
      return '+' .. l
    end, vim.split((new_text:gsub('\n$', '')), '\n', { plain = true }))
  end
  -- The text edit's own range (the diagnostic's may span more: the server replaces
  -- only the smallest differing span), moved by as many lines as the server's
  -- diagnostic moved since the answer.
  local range = vim.deepcopy(text_edit.range)
  local d = track.is_current(ask) and track.edit_diagnostic(edit)
  local anchor = ask.edit_anchors and ask.edit_anchors[index]
  if d and anchor then
    range.start.line = range.start.line + d.lnum - anchor
    range['end'].line = range['end'].line + d.lnum - anchor
  end
  encoding = encoding or 'utf-16'
  local lines = document_lines(edit.uri)
  local s, e = range.start.line + 1, range['end'].line + 1
  local first, last = lines[s] or '', lines[e] or ''
  local prefix = first:sub(1, byte_of(first, range.start.character, encoding))
  local suffix = last:sub(byte_of(last, range['end'].character, encoding) + 1)
  local old = {}
  for i = s, math.max(s, math.min(e, #lines)) do
    table.insert(old, lines[i] or '')
  end
  local new = vim.split(prefix .. new_text .. suffix, '\n', { plain = true })
  -- Both sides end with the untouched rest of the last line; drop shared lines.
  while #old > 0 and #new > 0 and old[1] == new[1] do
    table.remove(old, 1)
    table.remove(new, 1)
  end
  while #old > 0 and #new > 0 and old[#old] == new[#new] do
    table.remove(old)
    table.remove(new)
  end
  local out = {}
  for _, l in ipairs(old) do
    table.insert(out, '-' .. l)
  end
  for _, l in ipairs(new) do
    table.insert(out, '+' .. l)
  end
  return out
end

---@param message string
---@param level? integer
local function notify(message, level)
  vim.notify('copilot-ls: ' .. message, level or vim.log.levels.INFO)
end

--- The WorkspaceEdit without its change annotations. The server marks its edits
--- `needsConfirmation` for clients that apply them unseen; `ga` comes after the thread
--- showed the diff, so it is the confirmation, and Neovim asking again ("Apply all
--- changes?", then an "Applied changes" message waiting for Enter) would only repeat it.
---@param workspace_edit table
---@return table
local function without_confirmation(workspace_edit)
  local copy = vim.deepcopy(workspace_edit)
  copy.changeAnnotations = nil
  for _, change in ipairs(copy.documentChanges or {}) do
    change.annotationId = nil
    for _, text_edit in ipairs(change.edits or {}) do
      text_edit.annotationId = nil
    end
  end
  for _, text_edits in pairs(copy.changes or {}) do
    for _, text_edit in ipairs(text_edits) do
      text_edit.annotationId = nil
    end
  end
  return copy
end

--- The rows (0-based, first and last) a WorkspaceEdit's text edits of uri replace.
---@param workspace_edit table
---@param uri string
---@return integer? first
---@return integer? last
local function rows_of(workspace_edit, uri)
  local text_edits = {}
  for _, change in ipairs(workspace_edit.documentChanges or {}) do
    if change.edits and change.textDocument and change.textDocument.uri == uri then
      vim.list_extend(text_edits, change.edits)
    end
  end
  vim.list_extend(text_edits, (workspace_edit.changes or {})[uri] or {})
  local first, last
  for _, text_edit in ipairs(text_edits) do
    local range = text_edit.range
    if range then
      first = math.min(first or range.start.line, range.start.line)
      last = math.max(last or range['end'].line, range['end'].line)
    end
  end
  return first, last
end

--- Accepts a suggested edit: asks the server for the code action at the edit's current
--- place and applies its WorkspaceEdit. Calls done(ok) once it is over.
---@param ask table
---@param index integer
---@param done? fun(ok: boolean)
function M.accept(ask, index, done)
  done = done or function() end
  local edit = edit_of(ask, index)
  local state = edit and M.state(ask, index)
  if state ~= 'offered' then
    notify(
      ('this edit is %s'):format(state == 'withdrawn' and 'no longer offered' or (state or 'gone')),
      vim.log.levels.WARN
    )
    return done(false)
  end
  local client = ask.client_id and vim.lsp.get_client_by_id(ask.client_id)
  if not client or client:is_stopped() then
    notify('the server is not running (fix: see :LspLog)', vim.log.levels.ERROR)
    return done(false)
  end
  local bufnr = vim.uri_to_bufnr(edit.uri)
  vim.fn.bufload(bufnr)
  -- The server answers code actions only for documents it has open.
  if not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
  local d = track.edit_diagnostic(edit)
  local lsp_diagnostic = d and d.user_data and d.user_data.lsp
  local range = lsp_diagnostic and lsp_diagnostic.range
  if not range then
    local text_edit = text_edit_of(edit)
    range = text_edit and text_edit.range
      or { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }
  end
  local params = {
    textDocument = { uri = edit.uri },
    range = range,
    context = { diagnostics = { lsp_diagnostic }, only = { 'quickfix' }, triggerKind = 1 },
  }
  client:request('textDocument/codeAction', params, function(err, actions)
    if err then
      notify(('the code action failed: %s'):format(err.message or ''), vim.log.levels.ERROR)
      return done(false)
    end
    local action
    for _, candidate in ipairs(actions or {}) do
      local ids = vim.tbl_map(function(x)
        return type(x.data) == 'table' and x.data.editId or nil
      end, candidate.diagnostics or {})
      if vim.tbl_contains(ids, edit.id) or candidate.title == 'Copilot: ' .. edit.title then
        action = candidate
        break
      end
    end
    if not action then
      ask.edit_states[index] = 'seen'
      notify('the server no longer offers this edit: its text changed', vim.log.levels.WARN)
      return done(false)
    end
    local tick = vim.api.nvim_buf_get_changedtick(bufnr)
    -- The answer's citations of the lines its edit rewrites stay on them (track.lua).
    local first, last = rows_of(action.edit or {}, edit.uri)
    local unkeep = first and track.keep_citations(ask, bufnr, edit.uri, first, last)
    if action.edit then
      vim.lsp.util.apply_workspace_edit(without_confirmation(action.edit), client.offset_encoding)
    end
    if action.command then
      client:exec_cmd(action.command, { bufnr = bufnr })
    end
    -- Applied only when the document changed (Neovim skips an edit made for an older
    -- version of the buffer, for one).
    if
      not vim.api.nvim_buf_is_valid(bufnr)
      or vim.api.nvim_buf_get_changedtick(bufnr) == tick
    then
      if unkeep then
        unkeep()
      end
      notify('the edit was not applied; the buffer is unchanged', vim.log.levels.WARN)
      return done(false)
    end
    ask.edit_states[index] = 'applied'
    done(true)
  end, bufnr)
end

--- Rejects a suggested edit: the thread stops offering it. The server's hint stays
--- until the next answer or :CopilotClear.
---@param ask table
---@param index integer
function M.reject(ask, index)
  ask.edit_states = ask.edit_states or {}
  ask.edit_states[index] = 'rejected'
end

return M
