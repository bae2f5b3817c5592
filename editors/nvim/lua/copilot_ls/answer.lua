-- The thread window: one markdown buffer holding the conversation (every question, its
-- streamed reasoning and answer, citations, suggested edits as diffs) above a prompt
-- where the next question is typed. Shown in a float or a split; `q` closes it, `<CR>`
-- jumps to the citation under the cursor or sends the prompt, `ga`/`gr` accept or reject
-- a suggested edit. What the lines say comes from render.lua, how a window shows them
-- (options, folds, scrolling) from view.lua; this file owns the buffer, writing it, the
-- window and keys.
local config = require('copilot_ls.config')
local render = require('copilot_ls.render')
local roots = require('copilot_ls.roots')
local view = require('copilot_ls.view')

local M = {}

M.buf_name = 'copilot-ls://thread'

---@type integer?
M.bufnr = nil
---@type integer?
M.winid = nil
-- Buffer row (1-based) -> where <CR> on it goes, for the lines the plugin wrote itself
-- (citations and suggested edits). Other lines are searched for `path:line` mentions.
---@type table<integer, copilot_ls.Target>
M.targets = {}
-- Buffer row -> the suggested edit it shows (its item line and its diff).
M.edit_rows = {}
-- The newest ask shown, for resolving `path:line` mentions against its roots.
M.shown = nil
-- The asks of the thread shown, oldest first (the table ask.lua appends to).
M.thread = nil
-- Whether the markdown tree-sitter parser highlights the buffer.
M.treesitter = false
-- Whether an answer is streaming into the thread. Conceal is off meanwhile: with it on,
-- every change makes tree-sitter re-parse the markdown to know which lines conceal
-- (about 20 ms a delta in a 90-line thread, against 0.2 ms without).
M.streaming = false

local ns = vim.api.nvim_create_namespace('copilot_ls.thread')
local header_mark ---@type integer?
-- Where the plugin last left the thread window showing the newest exchange from its
-- question (view.show_exchange), while the user has not moved since: as its answer
-- streams in, and when it arrives, the window stays there. Nil once the user moved.
---@type {win: integer, topline: integer, lnum: integer}?
local placed

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
  -- bufhidden=hide keeps the thread for :CopilotAnswer after the window closes.
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  -- The prompt at the bottom is typed in; the plugin rewrites only the lines above it.
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_name(buf, M.buf_name)
  -- buftype=nofile (set by the scratch buffer) keeps the LSP client off this buffer.
  vim.bo[buf].filetype = 'markdown'
  -- Highlighting and conceal as codecompanion does, when this Neovim has the parser.
  M.treesitter = pcall(vim.treesitter.start, buf, 'markdown')
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map('q', M.close, 'Close the copilot-ls thread')
  map('<CR>', M.jump, 'Jump to the citation, or send the question typed at the bottom')
  map('ga', M.accept, 'Accept the suggested edit under the cursor')
  map('gr', M.reject, 'Reject the suggested edit under the cursor')
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      view.setup_window(vim.api.nvim_get_current_win(), M.streaming)
      -- This window may still hold trees of the thread from before it last changed.
      view.reparse(buf)
    end,
  })
  M.bufnr = buf
  header_mark = nil
  return buf
end

--- The 0-based row of the prompt's header line, found by its extmark (the user may
--- have typed lines anywhere), nil when it is gone.
---@param buf integer
---@return integer?
local function header_row(buf)
  if header_mark then
    local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns, header_mark, {})
    local line = pos[1] and vim.api.nvim_buf_get_lines(buf, pos[1], pos[1] + 1, false)[1]
    if line == render.prompt_header then
      return pos[1]
    end
  end
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i] == render.prompt_header then
      return i - 1
    end
  end
  return nil
end

---@param buf integer
---@param row integer 0-based
local function mark_header(buf, row)
  header_mark = vim.api.nvim_buf_set_extmark(buf, ns, row, 0, {
    id = header_mark,
    virt_text = { { '  type below; <CR> (normal mode) or :CopilotSend sends', 'Comment' } },
    virt_text_pos = 'eol',
    right_gravity = false,
  })
end

--- Writes the thread's lines above the prompt, changing only the lines that differ (a
--- streamed delta touches the last few), so the prompt being typed and the cursor stay.
--- Returns whether tree-sitter's trees need parsing before the next redraw (view.reparse):
--- not when lines only grew in place (most streamed tokens), which moves no position.
---@param buf integer
---@param lines string[]
---@param reset boolean a new thread: the prompt is emptied too
---@return boolean
local function write(buf, lines, reset)
  local row = not reset and header_row(buf)
  if not row then
    local all = vim.list_extend(vim.deepcopy(lines), { render.prompt_header, '' })
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, all)
    mark_header(buf, #lines)
    return true
  end
  mark_header(buf, row)
  local old = vim.api.nvim_buf_get_lines(buf, 0, row, false)
  local first = 1
  while first <= #old and first <= #lines and old[first] == lines[first] do
    first = first + 1
  end
  if first > #old and first > #lines then
    return false
  end
  local tail = 0
  while
    tail <= #old - first
    and tail <= #lines - first
    and old[#old - tail] == lines[#lines - tail]
  do
    tail = tail + 1
  end
  local replaced = vim.list_slice(old, first, #old - tail)
  local replacement = vim.list_slice(lines, first, #lines - tail)
  vim.api.nvim_buf_set_lines(buf, first - 1, #old - tail, false, replacement)
  return not view.only_grew(replaced, replacement)
end

---@param ask table
---@return string
local function encoding_of(ask)
  local client = ask.client_id and vim.lsp.get_client_by_id(ask.client_id)
  return client and client.offset_encoding or 'utf-16'
end

---@type copilot_ls.RenderCtx
local ctx = {
  positions = function(ask)
    return require('copilot_ls.track').positions(ask)
  end,
  edit_state = function(ask, index)
    return require('copilot_ls.edits').state(ask, index)
  end,
  diff = function(ask, index)
    return require('copilot_ls.edits').diff(ask, index, encoding_of(ask))
  end,
}

--- Puts the cursor of the thread window on the prompt line.
local function cursor_to_prompt()
  local row = is_open() and header_row(M.bufnr)
  if row then
    local last = vim.api.nvim_buf_line_count(M.bufnr)
    vim.api.nvim_win_set_cursor(M.winid, { math.min(row + 2, last), 0 })
  end
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
      title = ' copilot-ls ',
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
  view.setup_window(M.winid, M.streaming)
  -- The folds of what is already there.
  vim.api.nvim_win_call(M.winid, function()
    vim.cmd('silent! normal! zx')
  end)
end

--- Remembers where the thread window is (view.show_exchange just placed it).
local function remember_placement()
  placed = {
    win = M.winid,
    topline = vim.fn.getwininfo(M.winid)[1].topline,
    lnum = vim.api.nvim_win_get_cursor(M.winid)[1],
  }
end

--- Whether the thread window is still where the plugin left it: the user has not moved
--- its cursor, scrolled it or started typing in it since. Checked before the buffer is
--- written: lines added above the cursor move it, and the window with it.
---@return boolean
local function still_placed()
  if not (placed and is_open() and placed.win == M.winid) then
    return false
  end
  if vim.api.nvim_get_current_win() == M.winid and vim.api.nvim_get_mode().mode:sub(1, 1) ~= 'n' then
    return false
  end
  return vim.fn.getwininfo(M.winid)[1].topline == placed.topline
    and vim.api.nvim_win_get_cursor(M.winid)[1] == placed.lnum
end

--- Writes the thread of `ask` into the buffer. Opens the window when `open` is true; an
--- already open window is updated in place, a closed one stays closed.
---@param ask table
---@param open? boolean
function M.render(ask, open)
  local buf = ensure_buffer()
  local asks = ask.thread or { ask }
  local reset = M.thread ~= asks
  local previous = M.shown
  M.thread = asks
  M.shown = asks[#asks]
  local new_exchange = M.shown ~= previous
  -- Before writing, which moves the cursor (and the window) when it adds lines above it.
  local stay = not new_exchange and still_placed()
  local out = render.thread(asks, ctx)
  local moved = write(buf, out.lines, reset)
  vim.bo[buf].modified = false
  M.targets = out.targets
  M.edit_rows = out.edits
  local streaming = M.shown.status == 'waiting'
  if streaming ~= M.streaming then
    M.streaming = streaming
    view.set_streaming(buf, streaming)
  end
  local was_open = is_open()
  local opened = open and not was_open
  if opened then
    open_window()
  end
  view.update_folds(buf, out.folds)
  local question = out.starts[#out.starts]
  local header = header_row(buf)
  local place = is_open() and header and (opened or reset or new_exchange or stay)
  if place then
    -- A new question from its top (view.show_exchange), and it stays there while its
    -- answer streams in below and when the answer arrives, unless the user moved: the
    -- cursor waiting on the prompt would otherwise pull the window down with it.
    local prompt = math.min(header + 2, vim.api.nvim_buf_line_count(buf))
    view.show_exchange(M.winid, question, prompt)
  end
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    view.fill_window(win)
  end
  if place then
    remember_placement()
  else
    placed = nil
  end
  -- Last: the rows to parse are those shown once the windows have scrolled.
  if moved or opened then
    view.reparse(buf)
  end
end

--- Empties the thread (:CopilotClear): what was forgotten leaves the screen too, and a
--- question typed at the bottom next starts a new conversation.
function M.clear()
  M.thread = nil
  M.shown = nil
  M.targets = {}
  M.edit_rows = {}
  placed = nil
  view.clear_folds()
  if not (M.bufnr and vim.api.nvim_buf_is_valid(M.bufnr)) then
    return
  end
  local lines = render.cleared()
  write(M.bufnr, lines, true)
  vim.bo[M.bufnr].modified = false
  view.recompute_folds(M.bufnr)
  for _, win in ipairs(vim.fn.win_findbuf(M.bufnr)) do
    view.fill_window(win)
  end
  if is_open() then
    cursor_to_prompt()
  end
  view.reparse(M.bufnr)
end

--- Renders the thread shown again (positions, edits or diagnostics changed).
function M.refresh()
  if M.shown and M.bufnr and vim.api.nvim_buf_is_valid(M.bufnr) then
    M.render(M.shown)
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

--- Whether fname is a file to show: on disk, or a buffer (a file an accepted edit created
--- and nobody wrote yet).
---@param fname string
---@return boolean
local function showable(fname)
  return vim.fn.filereadable(fname) == 1 or vim.fn.bufloaded(fname) == 1
end

--- The file a path mentioned in the thread's text is: that of a citation or suggested
--- edit of the thread shown under that path (the server gave its URI; with several roots
--- the path is `<root name>/<path>`), else the path in the newest answer's roots
--- (roots.lua names them as the server does), else under the cwd.
---@param path string
---@return string? fname
local function file_of(path)
  for i = #(M.thread or {}), 1, -1 do
    local result = M.thread[i].result or {}
    for _, list in ipairs({ result.citations or {}, result.edits or {} }) do
      for _, item in ipairs(list) do
        if item.path == path and type(item.uri) == 'string' then
          local fname = vim.uri_to_fname(item.uri)
          if showable(fname) then
            return fname
          end
        end
      end
    end
  end
  local dirs = M.shown and M.shown.roots or { vim.fn.getcwd() }
  for _, fname in ipairs(roots.files_of(path, dirs)) do
    if showable(fname) then
      return fname
    end
  end
  return nil
end

--- Where <CR> on row goes: a citation where the server now has it, a suggested edit, or
--- a `path:line` mention in the text.
---@param row integer 1-based
---@param col integer
---@return {fname: string, lnum: integer}?
local function target_at(row, col)
  local target = M.targets[row]
  if target and target.kind == 'citation' then
    local at = require('copilot_ls.track').positions(target.ask)[target.index]
    return { fname = target.fname, lnum = at and at.lnum or target.lnum }
  elseif target then
    return target
  end
  local line = vim.api.nvim_buf_get_lines(M.bufnr, row - 1, row, false)[1] or ''
  local path, lnum = M.mention_at(line, col)
  local fname = path and file_of(path)
  if fname then
    return { fname = fname, lnum = lnum }
  end
  return nil
end

--- Sends the question typed below the prompt header, in the thread's conversation.
---@return table? ask the ask sent
function M.submit()
  local buf = M.bufnr
  local row = buf and vim.api.nvim_buf_is_valid(buf) and header_row(buf)
  if not row then
    vim.notify('copilot-ls: no thread yet; ask with :CopilotAsk', vim.log.levels.INFO)
    return nil
  end
  local typed = vim.api.nvim_buf_get_lines(buf, row + 1, -1, false)
  local question = vim.trim(table.concat(typed, '\n'))
  if question == '' then
    vim.notify(
      'copilot-ls: type a question below "' .. render.prompt_header .. '" first',
      vim.log.levels.WARN
    )
    return nil
  end
  local last = M.shown
  local ask = require('copilot_ls').follow_up(question, { bufnr = last and last.bufnr })
  -- Sending drew the new question above the prompt, which moved down: empty it there.
  row = ask and header_row(buf)
  if row then
    vim.api.nvim_buf_set_lines(buf, row + 1, -1, false, { '' })
    vim.bo[buf].modified = false
    if is_open() then
      cursor_to_prompt()
      -- Where the new exchange waits for its answer, to stay while it streams.
      if placed then
        remember_placement()
      end
    end
    view.reparse(buf)
  end
  return ask
end

--- <CR> in the thread: sends the prompt when the cursor is in it, else opens the
--- citation under the cursor.
function M.jump()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local header = header_row(M.bufnr)
  if header and row - 1 >= header then
    M.submit()
    return
  end
  local target = target_at(row, col)
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

---@return {ask: table, index: integer}?
local function edit_at_cursor()
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local found = M.edit_rows[row]
  if not found then
    vim.notify('copilot-ls: no suggested edit under the cursor', vim.log.levels.WARN)
  end
  return found
end

--- ga: accepts the suggested edit under the cursor through the server's code action.
---@param done? fun(ok: boolean)
function M.accept(done)
  local found = edit_at_cursor()
  if not found then
    return
  end
  require('copilot_ls.edits').accept(found.ask, found.index, function(ok)
    M.refresh()
    if type(done) == 'function' then
      done(ok)
    end
  end)
end

--- gr: rejects the suggested edit under the cursor.
function M.reject()
  local found = edit_at_cursor()
  if found then
    require('copilot_ls.edits').reject(found.ask, found.index)
    M.refresh()
  end
end

--- Shows the last thread again (:CopilotAnswer).
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

return M
