-- The text of the thread buffer: each question of the conversation with its streamed
-- reasoning and answer, citations and suggested edits (with their diff), plus which rows
-- jump where and which rows fold. Pure: it reads the asks and what `ctx` says about
-- positions and edits now, and touches no buffer or window.
local M = {}

-- The line above the question the user types next. The view finds it by an extmark.
M.prompt_header = '## Ask'

---@param s string
---@return string[]
local function split_lines(s)
  return vim.split(s, '\n', { plain = true })
end
M.split_lines = split_lines

---@param path string
---@param lnum integer
---@param end_lnum? integer
---@return string
function M.location(path, lnum, end_lnum)
  local label = ('%s:%d'):format(path, lnum)
  if end_lnum and end_lnum ~= lnum then
    label = ('%s-%d'):format(label, end_lnum)
  end
  return label
end

--- Where `arg` stands as a whole word in `text` (at its start or after a space, followed
--- by its end, a space or a colon): the first and last byte, else nil.
---@param text string
---@param arg string
---@return integer? first
---@return integer? last
local function find_arg(text, arg)
  if arg == '' then
    return nil
  end
  local init = 1
  while init <= #text do
    local first, last = text:find(arg, init, true)
    if not first then
      return nil
    end
    local before, after = text:sub(first - 1, first - 1), text:sub(last + 1, last + 1)
    if (before == '' or before == ' ') and (after == '' or after == ' ' or after == ':') then
      return first, last
    end
    init = first + 1
  end
  return nil
end

--- One line for a finished tool call: its name, main argument and summary, each said
--- once (docs/editors.md). The server's summaries often restate the argument, with the
--- lines it covered (`src/a.py:1-40`, `edit src/a.py:12-12`, `X: 3 definitions`): the
--- lines join the argument, the rest of the summary follows it, and a word the tool's
--- name already says (`edit` of propose_edit) is dropped.
---@param step table Step of PROTOCOL.md section 3
---@return string
function M.step_line(step)
  local args = type(step.arguments) == 'table' and step.arguments or {}
  local main = args.pattern or args.path or args.name or args.title
  local tool = tostring(step.tool or '?')
  local summary = type(step.summary) == 'string' and split_lines(vim.trim(step.summary))[1] or ''
  local label = tool
  -- An empty argument (list_directory of the roots, `path: ""`) names nothing.
  if (type(main) == 'string' and main ~= '') or type(main) == 'number' then
    local arg = tostring(main)
    local lines = ''
    if step.tool == 'read_file' and args.start_line then
      lines = ':' .. tostring(args.start_line)
      if args.end_line then
        lines = lines .. '-' .. tostring(args.end_line)
      end
    end
    local first, last = find_arg(summary, arg)
    if first then
      local before, after = vim.trim(summary:sub(1, first - 1)), summary:sub(last + 1)
      -- The lines the tool covered, as the server says (a read past a file's end is
      -- shorter than asked), a range of one line as one number.
      local from, to = after:match('^:(%d+)%-(%d+)')
      local single = not from and after:match('^:(%d+)')
      if from then
        lines = from == to and (':' .. from) or (':' .. from .. '-' .. to)
        after = after:sub(#from + #to + 3)
      elseif single then
        lines = ':' .. single
        after = after:sub(#single + 2)
      end
      after = vim.trim((after:gsub('^:', '')))
      if before ~= '' and not before:find(' ', 1, true) and tool:lower():find(before:lower(), 1, true) then
        before = ''
      end
      summary = vim.trim(before .. ' ' .. after)
    end
    label = label .. ': ' .. arg .. lines
  end
  local line = '- ' .. label
  if summary ~= '' then
    line = line .. ' — ' .. summary
  end
  if step.ok == false then
    line = line .. ' (failed)'
  end
  return line
end

--- What an ask cost, from AskResult.usage: `_2 model calls · 1200 tokens in (800
--- cached) · 150 out_`.
---@param usage table
---@return string
function M.usage_line(usage)
  local calls = tonumber(usage.modelCalls) or 0
  local line = ('_%d model call%s · %d tokens in'):format(
    calls,
    calls == 1 and '' or 's',
    tonumber(usage.inputTokens) or 0
  )
  local cached = tonumber(usage.cachedInputTokens) or 0
  if cached > 0 then
    line = line .. (' (%d cached)'):format(cached)
  end
  return line .. (' · %d out_'):format(tonumber(usage.outputTokens) or 0)
end

--- The model turns of an ask, oldest first: the streamed ones (AskDelta), else, for an
--- answer that did not stream, rebuilt from its steps (a step with a `thought` starts a
--- turn).
---@param ask table
---@return {text: string, steps: table[]}[]
function M.turns(ask)
  if ask.turns and next(ask.turns) then
    local numbers = vim.tbl_keys(ask.turns)
    table.sort(numbers)
    return vim.tbl_map(function(n)
      return ask.turns[n]
    end, numbers)
  end
  local turns = {}
  for _, step in ipairs(ask.result and ask.result.steps or {}) do
    if #turns == 0 or (type(step.thought) == 'string' and step.thought ~= '') then
      table.insert(turns, { text = type(step.thought) == 'string' and step.thought or '', steps = {} })
    end
    table.insert(turns[#turns].steps, step)
  end
  return turns
end

---@class copilot_ls.RenderCtx
---@field positions fun(ask: table): table<integer, {lnum: integer, end_lnum: integer, gone: boolean}>
---@field edit_state fun(ask: table, index: integer): string, integer? 'offered'|'applied'|'rejected'|'withdrawn', 1-based line
---@field diff fun(ask: table, index: integer): string[]? '-'/'+' lines

---@class copilot_ls.Target
---@field kind 'citation'|'edit'
---@field ask table
---@field index integer
---@field fname string
---@field lnum integer

---@class copilot_ls.Rendered
---@field lines string[]
---@field targets table<integer, copilot_ls.Target> 1-based row -> where <CR> goes
---@field folds {[1]: integer, [2]: integer, turn: table}[] 1-based inclusive row ranges
---@field edits table<integer, {ask: table, index: integer}> 1-based row -> the edit it shows
---@field starts integer[] per ask, the 1-based row of its first line (its question)

-- Why an ask stopped early, in words; a no-model answer says so itself.
local stop_notes = {
  max_steps = '_Stopped: the step limit (maxSteps) was reached before a final answer._',
  cancelled = '_Cancelled._',
}

--- `text` with each `path:N` or `path:N-M` mention of a cited file that falls inside a
--- citation's lines moved by as many lines as that citation has moved since the answer
--- (`now(i)` gives citation i's lines now: the server's republished diagnostics, the same
--- positions the citations list, <CR> and the quickfix list use). Other mentions stay.
---@param text string
---@param citations table[] the AskResult's citations
---@param now fun(i: integer): {lnum: integer, end_lnum: integer, gone: boolean}?
---@return string
function M.follow_mentions(text, citations, now)
  if #citations == 0 then
    return text
  end
  local by_path = {}
  for i, c in ipairs(citations) do
    if c.path and c.verified ~= false then
      by_path[c.path] = by_path[c.path] or {}
      table.insert(by_path[c.path], i)
    end
  end
  --- The citation holding line `lnum` of `path` (the narrowest), and how far it moved.
  local function shift(path, lnum)
    local best, best_span
    for _, i in ipairs(by_path[path] or {}) do
      local c = citations[i]
      local last = math.max(c.line, c.endLine or c.line)
      if lnum >= c.line and lnum <= last and (not best_span or last - c.line < best_span) then
        best, best_span = i, last - c.line
      end
    end
    local at = best and now(best)
    if not at or at.gone then
      return 0
    end
    return at.lnum - citations[best].line
  end
  return (
    text:gsub('([%w_%.%-/]+):(%d+)(%-?)(%d*)', function(path, first, dash, last)
      if not by_path[path] then
        return nil
      end
      local delta = shift(path, tonumber(first))
      if delta == 0 then
        return nil
      end
      local moved = ('%s:%d'):format(path, tonumber(first) + delta)
      if dash ~= '' and last ~= '' then
        return ('%s-%d'):format(moved, tonumber(last) + delta)
      end
      return moved .. dash .. last
    end)
  )
end

--- What a waiting ask waits for (its `phase`, from ask.lua): copilot-ls until the server
--- took the question up, then the model, or the tool call it runs.
---@param ask table
---@return string
function M.waiting_line(ask)
  if ask.phase == 'model' then
    return '_Waiting for the model…_'
  elseif ask.phase == 'tool' and ask.progress[#ask.progress] then
    local tool = ask.progress[#ask.progress]:match('^([%w_]+)') or 'the tool'
    return ('_Running %s…_'):format(tool)
  end
  return '_Waiting for copilot-ls…_'
end

local edit_notes = {
  applied = '_applied_',
  rejected = '_rejected_',
  withdrawn = '_no longer offered: its text changed, or a newer answer replaced it_',
}

---@param out copilot_ls.Rendered
---@param ask table
---@param ctx copilot_ls.RenderCtx
local function render_ask(out, ask, ctx)
  local lines = out.lines
  local function add(line)
    table.insert(lines, line)
  end
  for _, line in ipairs(split_lines(ask.question)) do
    add('> ' .. line)
  end
  add('')

  local turns = M.turns(ask)
  -- The last turn without tool calls is the answer being written; the others reason.
  local answer_turn = turns[#turns]
  if answer_turn and #answer_turn.steps > 0 then
    answer_turn = nil
  end
  local steps_seen = 0
  for _, turn in ipairs(turns) do
    if turn ~= answer_turn then
      local first = #lines + 1
      add(turn.text ~= '' and '_Reasoning:_' or '_Tool calls:_')
      if turn.text ~= '' then
        vim.list_extend(lines, split_lines(vim.trim(turn.text)))
      end
      for _, step in ipairs(turn.steps) do
        add(M.step_line(step))
      end
      steps_seen = steps_seen + #turn.steps
      -- Folded once its tool calls arrive: until then it may be the answer.
      if #turn.steps > 0 then
        table.insert(out.folds, { first, #lines, turn = turn })
      end
      add('')
    end
  end

  if ask.status == 'waiting' then
    if answer_turn and answer_turn.text ~= '' then
      vim.list_extend(lines, split_lines(answer_turn.text))
      add('')
    end
    -- Tool calls started (workDone progress) whose step has not arrived yet.
    for i = steps_seen + 1, #ask.progress do
      add('- ' .. ask.progress[i])
    end
    -- Not under text streaming in: that says the ask is under way itself.
    if not (answer_turn and answer_turn.text ~= '') then
      add(M.waiting_line(ask))
    end
    return
  elseif ask.status == 'cancelled' then
    if answer_turn and answer_turn.text ~= '' then
      vim.list_extend(lines, split_lines(answer_turn.text))
      add('')
    end
    add('_Cancelled._')
    return
  elseif ask.status == 'error' then
    -- The message is the notification's, which names the plugin; here it is plain.
    add('_Failed:_ ' .. ((ask.error or 'unknown error'):gsub('^copilot%-ls: ', '')))
    return
  end

  local result = ask.result or {}
  -- The reply's answer is authoritative: it replaces the streamed text. Its `path:line`
  -- mentions of cited lines say where those lines are now, as the citations do.
  local positions = ctx.positions(ask)
  local answer_text = M.follow_mentions(result.answer or '', result.citations or {}, function(i)
    return positions[i]
  end)
  vim.list_extend(lines, split_lines(answer_text))
  local stop_note = stop_notes[result.stopReason]
  if stop_note then
    add('')
    add(stop_note)
  end
  local usage = result.usage
  if type(usage) == 'table' and (tonumber(usage.modelCalls) or 0) > 0 then
    add('')
    add(M.usage_line(usage))
  end

  local citations = result.citations or {}
  -- A no-model answer is itself the list of places, each with its excerpt and a
  -- `path:line` that <CR> follows: listing them again would say it twice.
  if #citations > 0 and result.stopReason ~= 'no_provider' then
    add('')
    add('## Citations')
    add('')
    for i, citation in ipairs(citations) do
      local at = positions[i]
      local line = '- ' .. M.location(citation.path, at.lnum, at.end_lnum)
      if citation.note and citation.note ~= '' then
        line = line .. ' — ' .. citation.note
      end
      if citation.verified == false then
        line = line .. ' (unverified)'
      end
      if at.gone then
        line = line .. ' (the cited text is gone)'
      end
      add(line)
      out.targets[#lines] = {
        kind = 'citation',
        ask = ask,
        index = i,
        fname = vim.uri_to_fname(citation.uri),
        lnum = at.lnum,
      }
    end
  end

  local edits = result.edits or {}
  if #edits > 0 then
    add('')
    add('## Suggested edits')
    add('')
    local offered = 0
    for i, edit in ipairs(edits) do
      local state, lnum = ctx.edit_state(ask, i)
      lnum = lnum or 1
      local target =
        { kind = 'edit', ask = ask, index = i, fname = vim.uri_to_fname(edit.uri), lnum = lnum }
      local line = ('- %s — %s:%d'):format(edit.title, edit.path, lnum)
      if edit_notes[state] then
        line = line .. ' — ' .. edit_notes[state]
      end
      add(line)
      out.targets[#lines] = target
      out.edits[#lines] = { ask = ask, index = i }
      local diff = state == 'offered' and ctx.diff(ask, i)
      if diff then
        offered = offered + 1
        add('  ```diff')
        -- `ga` works on any line of the block, its fences included.
        out.targets[#lines] = target
        out.edits[#lines] = { ask = ask, index = i }
        for _, diff_line in ipairs(diff) do
          add('  ' .. diff_line)
          out.targets[#lines] = target
          out.edits[#lines] = { ask = ask, index = i }
        end
        add('  ```')
        out.edits[#lines] = { ask = ask, index = i }
      elseif state == 'offered' then
        offered = offered + 1
      end
    end
    if offered > 0 then
      add('')
      add('_On an edit: ga accepts it (the server applies it as a code action), gr rejects it._')
    end
  end
end

--- The lines of an emptied thread (:CopilotClear), without the prompt.
---@return string[]
function M.cleared()
  return { '_Cleared: the conversation is forgotten. A question typed below starts a new one._', '' }
end

--- The thread's lines, without the prompt (the view keeps that).
---@param asks table[] the asks of one conversation, oldest first
---@param ctx copilot_ls.RenderCtx
---@return copilot_ls.Rendered
function M.thread(asks, ctx)
  local out = { lines = {}, targets = {}, folds = {}, edits = {}, starts = {} }
  for i, ask in ipairs(asks) do
    if i > 1 then
      table.insert(out.lines, '')
      table.insert(out.lines, '---')
      table.insert(out.lines, '')
    end
    table.insert(out.starts, #out.lines + 1)
    render_ask(out, ask, ctx)
  end
  table.insert(out.lines, '')
  return out
end

return M
