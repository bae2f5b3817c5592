-- The answer window: one scratch markdown buffer shown in a float or a split, rendered
-- from the state of the last ask; `q` closes it and `<CR>` jumps to the citation under
-- the cursor.
local config = require('copilot_ls.config')

local M = {}

M.buf_name = 'copilot-ls://answer'

---@type integer?
M.bufnr = nil
---@type integer?
M.winid = nil
-- Buffer line (1-based) -> where <CR> on it goes, for the lines the plugin wrote itself
-- (citations and suggested edits). Other lines are searched for `path:line` mentions.
---@type table<integer, {fname: string, lnum: integer}>
M.targets = {}
-- The ask shown, for resolving `path:line` mentions against its project root.
M.shown = nil

local function is_open()
  return M.winid ~= nil
    and vim.api.nvim_win_is_valid(M.winid)
    and vim.api.nvim_win_get_buf(M.winid) == M.bufnr
end

local function ensure_buffer()
  if M.bufnr and vim.api.nvim_buf_is_valid(M.bufnr) then
    return M.bufnr
  end
  local buf = vim.api.nvim_create_buf(false, true)
  -- bufhidden=hide keeps the text for :CopilotAnswer after the window closes.
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_name(buf, M.buf_name)
  -- buftype=nofile (set by the scratch buffer) keeps the LSP client off this buffer.
  vim.bo[buf].filetype = 'markdown'
  vim.keymap.set('n', 'q', M.close, { buffer = buf, nowait = true, desc = 'Close the answer' })
  vim.keymap.set('n', '<CR>', M.jump, { buffer = buf, desc = 'Jump to the citation' })
  M.bufnr = buf
  return buf
end

---@param s string
---@return string[]
local function split_lines(s)
  return vim.split(s, '\n', { plain = true })
end

---@param citation table Citation of PROTOCOL.md section 3
---@return string
local function citation_label(citation)
  local label = ('%s:%d'):format(citation.path, citation.line)
  if citation.endLine and citation.endLine ~= citation.line then
    label = ('%s-%d'):format(label, citation.endLine)
  end
  return label
end

--- Where a suggested edit starts, from its WorkspaceEdit (documentChanges per the
--- protocol; `changes` accepted too, as any LSP client would).
---@param edit table SuggestedEdit
---@return integer? lnum 1-based
local function edit_line(edit)
  local workspace_edit = edit.edit or {}
  local text_edits
  for _, change in ipairs(workspace_edit.documentChanges or {}) do
    if change.edits and change.textDocument and change.textDocument.uri == edit.uri then
      text_edits = change.edits
      break
    end
  end
  text_edits = text_edits or (workspace_edit.changes or {})[edit.uri]
  local first = text_edits and text_edits[1]
  if first and first.range then
    return first.range.start.line + 1
  end
  return nil
end

--- The buffer's lines for an ask, and the jump targets of the lines written here.
---@param ask table the state of one ask (see ask.lua)
---@return string[] lines
---@return table<integer, {fname: string, lnum: integer}> targets
function M.render_lines(ask)
  local lines, targets = {}, {}
  for _, line in ipairs(split_lines(ask.question)) do
    table.insert(lines, '> ' .. line)
  end
  table.insert(lines, '')

  if ask.status == 'waiting' then
    table.insert(lines, '_Waiting for copilot-ls…_')
    for _, message in ipairs(ask.progress) do
      table.insert(lines, '- ' .. message)
    end
  elseif ask.status == 'cancelled' then
    table.insert(lines, '_Cancelled._')
  elseif ask.status == 'error' then
    table.insert(lines, '_Failed:_ ' .. (ask.error or 'unknown error'))
  elseif ask.status == 'done' then
    local result = ask.result
    vim.list_extend(lines, split_lines(result.answer or ''))
    if result.stopReason and result.stopReason ~= 'answered' then
      table.insert(lines, '')
      table.insert(lines, ('_Stopped: %s_'):format(result.stopReason))
    end
    if result.citations and #result.citations > 0 then
      table.insert(lines, '')
      table.insert(lines, '## Citations')
      table.insert(lines, '')
      for _, citation in ipairs(result.citations) do
        local line = '- ' .. citation_label(citation)
        if citation.note and citation.note ~= '' then
          line = line .. ' — ' .. citation.note
        end
        if citation.verified == false then
          line = line .. ' (unverified)'
        end
        table.insert(lines, line)
        targets[#lines] = { fname = vim.uri_to_fname(citation.uri), lnum = citation.line }
      end
    end
    if result.edits and #result.edits > 0 then
      table.insert(lines, '')
      table.insert(lines, '## Suggested edits')
      table.insert(lines, '')
      for _, edit in ipairs(result.edits) do
        local lnum = edit_line(edit) or 1
        table.insert(lines, ('- %s — %s:%d'):format(edit.title, edit.path, lnum))
        targets[#lines] = { fname = vim.uri_to_fname(edit.uri), lnum = lnum }
      end
      table.insert(lines, '')
      table.insert(lines, '_Apply one with vim.lsp.buf.code_action() on that line._')
    end
  end
  return lines, targets
end

local function open_window()
  local opts = config.options.answer
  local buf = ensure_buffer()
  if opts.layout == 'float' then
    local columns, rows = vim.o.columns, vim.o.lines - vim.o.cmdheight - 2
    local width = math.max(20, math.floor(columns * opts.width))
    local height = math.max(5, math.floor(rows * opts.height))
    M.winid = vim.api.nvim_open_win(buf, true, {
      relative = 'editor',
      width = math.min(width, columns),
      height = math.min(height, math.max(rows, 1)),
      row = math.max(0, math.floor((rows - height) / 2)),
      col = math.max(0, math.floor((columns - width) / 2)),
      border = opts.border,
      title = ' Copilot ',
      title_pos = 'center',
    })
  else
    local vertical = opts.layout == 'vsplit'
    local size = vertical and math.floor(vim.api.nvim_win_get_width(0) * opts.width)
      or math.floor(vim.api.nvim_win_get_height(0) * opts.height)
    vim.cmd(('botright %s%dsplit'):format(vertical and 'vertical ' or '', math.max(size, 5)))
    M.winid = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(M.winid, buf)
  end
  vim.wo[M.winid].wrap = true
  vim.wo[M.winid].linebreak = true
  vim.wo[M.winid].number = false
  vim.wo[M.winid].relativenumber = false
  vim.wo[M.winid].spell = false
end

--- Writes the ask into the answer buffer. Opens the window when `open` is true; an
--- already open window is updated in place, a closed one stays closed.
---@param ask table
---@param open? boolean
function M.render(ask, open)
  local buf = ensure_buffer()
  local lines, targets = M.render_lines(ask)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  M.targets = targets
  M.shown = ask
  if open and not is_open() then
    open_window()
  end
end

---@return boolean
function M.is_open()
  return is_open()
end

function M.close()
  if is_open() then
    if #vim.api.nvim_tabpage_list_wins(0) == 1 then
      -- The last window cannot close; show another buffer instead.
      vim.cmd('silent! bprevious')
    else
      vim.api.nvim_win_close(M.winid, false)
    end
  end
  M.winid = nil
end

--- The `path:line` mention at the cursor column, else the first one on the line.
---@param line string
---@param col integer 0-based byte column
---@return string? path
---@return integer? lnum
function M.mention_at(line, col)
  local first_path, first_lnum
  local init = 1
  while true do
    local s, e, path, lnum = line:find('([%w_%.%-/]+):(%d+)', init)
    if not s then
      break
    end
    -- A file path has a dot or a slash; this skips `step:3`-like words.
    if path:find('[%./]') then
      if col + 1 >= s and col + 1 <= e then
        return path, tonumber(lnum)
      end
      first_path, first_lnum = first_path or path, first_lnum or tonumber(lnum)
    end
    init = e + 1
  end
  return first_path, first_lnum
end

--- The window to open a citation in: the one the question came from, else any other
--- normal window, else a new split.
---@param ask? table
---@return integer
local function target_window(ask)
  if ask and ask.source_win and vim.api.nvim_win_is_valid(ask.source_win) then
    if ask.source_win ~= M.winid then
      return ask.source_win
    end
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if win ~= M.winid and vim.api.nvim_win_get_config(win).relative == '' then
      return win
    end
  end
  vim.cmd('aboveleft split')
  return vim.api.nvim_get_current_win()
end

--- Shows fname in win. A loaded buffer is shown as it is: `:edit` of a modified buffer
--- would re-read it (E37). Another file is edited with :hide, so a modified buffer in
--- that window does not stop it with 'nohidden' either.
---@param win integer
---@param fname string
function M.show_file(win, fname)
  local buf = vim.fn.bufadd(fname)
  if vim.api.nvim_buf_is_loaded(buf) then
    vim.bo[buf].buflisted = true
    vim.api.nvim_win_set_buf(win, buf)
  else
    vim.api.nvim_win_call(win, function()
      vim.cmd('hide edit ' .. vim.fn.fnameescape(fname))
    end)
  end
end

--- <CR> in the answer: opens the citation under the cursor.
function M.jump()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local target = M.targets[row]
  if not target then
    local line = vim.api.nvim_buf_get_lines(0, row - 1, row, false)[1] or ''
    local path, lnum = M.mention_at(line, col)
    if path then
      local root = M.shown and M.shown.root or vim.fn.getcwd()
      local fname = path:sub(1, 1) == '/' and path or vim.fs.joinpath(root, path)
      if vim.fn.filereadable(fname) == 1 then
        target = { fname = fname, lnum = lnum }
      end
    end
  end
  if not target then
    vim.notify('copilot-ls: no citation (path:line) under the cursor', vim.log.levels.WARN)
    return
  end
  local ask = M.shown
  local float = is_open() and vim.api.nvim_win_get_config(M.winid).relative ~= ''
  if float then
    M.close()
  end
  local win = target_window(ask)
  vim.api.nvim_set_current_win(win)
  M.show_file(win, target.fname)
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(win, { math.max(1, math.min(target.lnum, last)), 0 })
  vim.cmd('normal! zv')
end

--- Shows the last answer again (:CopilotAnswer).
---@param ask? table
---@return boolean shown
function M.reopen(ask)
  if not ask then
    return false
  end
  M.render(ask, true)
  if is_open() then
    vim.api.nvim_set_current_win(M.winid)
  end
  return true
end

--- Puts the citations of a finished ask in a new quickfix list. ' ' pushes a new list,
--- so :colder gets the user's previous list back.
---@param ask table
function M.set_quickfix(ask)
  local citations = ask.result and ask.result.citations or {}
  if #citations == 0 then
    return
  end
  local items = {}
  for _, citation in ipairs(citations) do
    table.insert(items, {
      filename = vim.uri_to_fname(citation.uri),
      lnum = citation.line,
      end_lnum = citation.endLine or citation.line,
      col = 1,
      text = (citation.note and citation.note ~= '') and citation.note or ask.question,
      valid = 1,
    })
  end
  local title = 'Copilot: ' .. (split_lines(ask.question)[1] or '')
  vim.fn.setqflist({}, ' ', { title = title, items = items })
end

return M
