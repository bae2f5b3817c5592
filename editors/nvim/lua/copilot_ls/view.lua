-- How a window shows the thread: its window-local options (set for the thread buffer in
-- that window only, so they never follow into another buffer or a window split off it),
-- the reasoning folds, where it is scrolled (a new exchange from its question, no empty
-- `~` rows under hidden lines), and keeping tree-sitter's trees in step with the lines
-- the plugin rewrites. answer.lua owns the buffer and decides when; this file, how.
local M = {}

-- Row (1-based) -> 'foldexpr' value, from the last render.
M.fold_levels = {}
local fold_signature = ''

--- Window options for a window showing the thread. They are set for the thread buffer in
--- that window (`:setlocal`, vim.wo[win][0]), not as the window's own values (`:set`):
--- those are what another buffer shown in the window gets, and what a window split off it
--- (`:split`, `:new`, `:checkhealth`'s tab) starts from, so the thread's folds and
--- 'foldtext' would follow there. Folds are computed by foldexpr from the last render:
--- reasoning turns fold once their tool calls arrive.
---@param win integer a window showing the thread buffer
---@param streaming boolean an answer is streaming: conceal stays off (see answer.lua)
function M.setup_window(win, streaming)
  local wo = vim.wo[win][0]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.spell = false
  wo.conceallevel = streaming and 0 or 2
  -- Concealed on the cursor's line too in Normal mode, as help buffers do: after `gr` the
  -- cursor sits on `— _rejected_`, which should read as the others do.
  wo.concealcursor = 'nc'
  wo.foldmethod = 'expr'
  wo.foldexpr = "v:lua.require'copilot_ls.view'.foldexpr(v:lnum)"
  wo.foldtext = "v:lua.require'copilot_ls.view'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
  wo.foldcolumn = '0'
end

--- Conceal on or off in every window showing buf.
---@param buf integer
---@param streaming boolean
function M.set_streaming(buf, streaming)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.wo[win][0].conceallevel = streaming and 0 or 2
  end
end

--- 'foldexpr' of the thread window.
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  return M.fold_levels[lnum] or '0'
end

--- 'foldtext' of the thread window: what the folded reasoning said, and how many calls.
---@return string
function M.foldtext()
  local lines = vim.api.nvim_buf_get_lines(0, vim.v.foldstart - 1, vim.v.foldend, false)
  local calls, said = 0, nil
  for i, line in ipairs(lines) do
    if line:match('^%- ') then
      calls = calls + 1
    elseif i > 1 and not said and vim.trim(line) ~= '' then
      said = vim.trim(line)
    end
  end
  local text = said and ('▸ Reasoning: ' .. vim.fn.strcharpart(said, 0, 60)) or '▸ Tool calls'
  return ('%s (%d tool call%s)'):format(text, calls, calls == 1 and '' or 's')
end

--- Recomputes the folds of every window showing buf.
---@param buf integer
function M.recompute_folds(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_call(win, function()
      vim.cmd('silent! normal! zx')
    end)
  end
end

---@param buf integer
---@param folds {[1]: integer, [2]: integer}[]
function M.update_folds(buf, folds)
  local levels, signature = {}, {}
  for _, fold in ipairs(folds) do
    levels[fold[1]] = '>1'
    for row = fold[1] + 1, fold[2] do
      levels[row] = '1'
    end
    table.insert(signature, fold[2] - fold[1])
  end
  M.fold_levels = levels
  signature = table.concat(signature, ',')
  if signature == fold_signature then
    -- Same folds, maybe shifted: Neovim moves them with the lines.
    return
  end
  fold_signature = signature
  -- A new fold (a turn's tool calls arrived) or a longer one: recompute, closing it.
  M.recompute_folds(buf)
end

--- Forgets the folds (:CopilotClear).
function M.clear_folds()
  M.fold_levels = {}
  fold_signature = ''
end

--- Scrolls a window of the thread up when it shows empty rows (`~`) below the last line
--- while lines above its top are hidden: replacing a long thread by a short one (a new
--- question asked from inside it) would otherwise leave only the prompt's last line on
--- screen, its top past everything the new thread holds. The cursor stays where it is:
--- scrolling up to fill rows never hides it.
---@param win integer
function M.fill_window(win)
  vim.api.nvim_win_call(win, function()
    local top = vim.fn.line('w0')
    if top <= 1 then
      return
    end
    local height = vim.api.nvim_win_get_height(win)
    if vim.api.nvim_win_text_height(win, { start_row = top - 1 }).all >= height then
      return
    end
    local view = vim.fn.winsaveview()
    -- The last line at the bottom of the window: as many lines above it as fit.
    vim.cmd('keepjumps normal! Gzb')
    view.topline = vim.fn.line('w0')
    vim.fn.winrestview(view)
  end)
end

--- Shows the newest exchange from its question: a question just sent, or the answer that
--- just arrived, opens at its top, not scrolled down to the prompt below it (the cursor
--- waiting on the prompt would pull the window there, hiding the answer's first lines).
--- When the exchange and the prompt fit in the window together the cursor waits on the
--- prompt; else it goes to the question, and `G` reaches the prompt.
---@param win integer
---@param question integer 1-based row of the exchange's first line (`> question`)
---@param prompt integer 1-based row where the next question is typed
function M.show_exchange(win, question, prompt)
  vim.api.nvim_win_call(win, function()
    local height = vim.api.nvim_win_get_height(win)
    local needed = vim.api.nvim_win_text_height(win, {
      start_row = question - 1,
      end_row = prompt - 1,
    }).all
    local view = vim.fn.winsaveview()
    view.topline, view.topfill, view.skipcol = question, 0, 0
    view.lnum = needed <= height and prompt or question
    view.col, view.coladd, view.curswant = 0, 0, 0
    vim.fn.winrestview(view)
  end)
  M.fill_window(win)
end

--- Whether rewriting `old` into `new` (the lines replaced) only made lines longer in
--- place: the same number of lines, each starting with what it held.
---@param old string[]
---@param new string[]
---@return boolean
function M.only_grew(old, new)
  if #old ~= #new then
    return false
  end
  for i, line in ipairs(old) do
    if new[i]:sub(1, #line) ~= line then
      return false
    end
  end
  return true
end

--- Parses the thread's markdown where windows show it, now, after the plugin rewrote
--- its lines. Tree-sitter's highlighter parses when it next draws, asynchronously once
--- that takes over 3 ms (a long thread, a loaded machine), and until that parse ends it
--- keeps drawing with the trees it had before the change: their nodes can lie past the
--- end of a line or of the buffer that the rewrite shortened or moved ("Decoration
--- provider "range" (ns=nvim.treesitter.highlighter): ... Invalid 'end_row': out of
--- range"), and that redraw loses its highlighting and conceal (`_rejected_` with its
--- underscores). Trees already valid for the rows it draws make its own parse end at
--- once, so it draws with them. Only the rows shown (once the windows scrolled): a long
--- thread's inline markdown takes tens of milliseconds to parse, its visible part a few.
---@param buf integer
function M.reparse(buf)
  if not vim.treesitter.highlighter.active[buf] then
    return
  end
  local first, last
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    local top, bottom = unpack(vim.api.nvim_win_call(win, function()
      return { vim.fn.line('w0'), vim.fn.line('w$') }
    end))
    -- 0-based, and a row either side: the highlighter asks for the row below the last.
    first = math.min(first or math.huge, math.max(top - 2, 0))
    last = math.max(last or 0, bottom + 1)
  end
  if not first then
    return
  end
  local ok, parser = pcall(vim.treesitter.get_parser, buf, 'markdown', { error = false })
  if ok and parser then
    parser:parse({ first, last })
  end
end

return M
