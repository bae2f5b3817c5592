-- Where the last answer's citations and suggested edits are now. The server republishes
-- its diagnostics as the cited documents change (PROTOCOL.md section 5: code `citation`,
-- and `suggested-edit` with `data.editId`), so they, not the AskResult's lines, say
-- where a citation's text sits and whether an edit is still offered. Also the citations
-- an answer's own edit rewrote (`ga`), which the server no longer finds: an extmark keeps
-- them on the changed lines.
local M = {}

local kept_ns = vim.api.nvim_create_namespace('copilot_ls.kept_citations')

---@param uri string
---@return integer? bufnr
function M.buffer_of(uri)
  local fname = vim.uri_to_fname(uri)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf) == fname then
      return buf
    end
  end
  return nil
end

---@param uri string
---@param code string
---@return vim.Diagnostic[]
local function diagnostics(uri, code)
  local buf = M.buffer_of(uri)
  if not buf then
    return {}
  end
  return vim.tbl_filter(function(d)
    return d.source == 'copilot' and d.code == code
  end, vim.diagnostic.get(buf))
end

---@param d vim.Diagnostic
---@return table? the LSP diagnostic's data
local function data_of(d)
  local lsp = d.user_data and d.user_data.lsp
  return type(lsp) == 'table' and type(lsp.data) == 'table' and lsp.data or nil
end

--- Whether the server's diagnostics are this ask's: it is the last answer and nothing
--- cleared them since. A newer answer's replace them (section 5).
---@param ask table
---@return boolean
function M.is_current(ask)
  local current = require('copilot_ls.ask').current_answer
  return current == ask and not ask.cleared
end

--- Whether the citation diagnostics in the buffers can be this ask's: it is the current
--- answer and no newer ask is under way. A newer ask's diagnostics replace these when it
--- ends, arriving before its reply or after it (notifications and replies travel apart),
--- so while it runs a diagnostic at citation index i of a document may already be the
--- newer answer's: read then, it would move this answer's citation i there. Its citations
--- keep their last lines meanwhile (and follow again should the newer ask fail).
---@param ask table
---@return boolean
local function citations_readable(ask)
  if not M.is_current(ask) then
    return false
  end
  local last = require('copilot_ls.ask').last
  return not (last and last ~= ask and last.status == 'waiting')
end

--- The message the server gives citation diagnostics: the note, else the question.
---@param citation table
---@param question string
---@return string
local function message_of(citation, question)
  return (citation.note and citation.note ~= '') and citation.note or question
end

--- Where each citation of ask is and what its diagnostic says, to tell the diagnostics
--- of the answer that replaces it from its own (match_citation).
---@param ask table?
---@return {uri: string, message: string}[]?
function M.citation_messages(ask)
  local citations = ask and ask.result and ask.result.citations
  if not citations then
    return nil
  end
  return vim.tbl_map(function(citation)
    return { uri = citation.uri, message = message_of(citation, ask.question) }
  end, citations)
end

--- The diagnostic of citation i of ask, matched among those of its document: by the
--- citation index in its `data` (`{citation, line, endLine}`), else (an older server) by
--- order when each citation still has one, else by message (the note or the question)
--- and nearness to the cited line.
---@param ask table
---@param i integer
---@return vim.Diagnostic?
local function match_citation(ask, i)
  local citations, question = ask.result.citations, ask.question
  local citation = citations[i]
  local candidates = diagnostics(citation.uri, 'citation')
  -- The reply can come before the diagnostics that replace the previous answer's: one
  -- at the same index that says what the previous answer's citation said, and not what
  -- this one's says, is still that answer's.
  local own, old = message_of(citation, question), ask.replaced and ask.replaced[i]
  local function previous_answers(d)
    return old ~= nil and old.uri == citation.uri and d.message == old.message and d.message ~= own
  end
  -- The server says which citation (its 0-based index) each diagnostic is.
  local indexed = false
  for _, d in ipairs(candidates) do
    local data = data_of(d)
    if data and data.citation ~= nil then
      indexed = true
      if tonumber(data.citation) == i - 1 and not previous_answers(d) then
        return d
      end
    end
  end
  if indexed then
    return nil
  end
  local same_uri, k = {}, nil
  for j, other in ipairs(citations) do
    if other.uri == citation.uri then
      table.insert(same_uri, j)
      if j == i then
        k = #same_uri
      end
    end
  end
  if #candidates == #same_uri then
    return candidates[k]
  end
  local best, best_distance = nil, math.huge
  for _, d in ipairs(candidates) do
    if d.message == own then
      local distance = math.abs(d.lnum + 1 - citation.line)
      if distance < best_distance then
        best, best_distance = d, distance
      end
    end
  end
  return best
end

--- Where the extmark keeping citation i of ask is now (1-based), nil when it has none.
---@param ask table
---@param i integer
---@return integer?
local function kept_line(ask, i)
  local kept = ask.kept_citations and ask.kept_citations[i]
  if not (kept and vim.api.nvim_buf_is_valid(kept.buf)) then
    return nil
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(kept.buf, kept_ns, kept.id, {})
  return pos[1] and pos[1] + 1 or nil
end

---@param ask table
---@param i integer
local function drop_kept(ask, i)
  local kept = ask.kept_citations and ask.kept_citations[i]
  if kept then
    if vim.api.nvim_buf_is_valid(kept.buf) then
      vim.api.nvim_buf_del_extmark(kept.buf, kept_ns, kept.id)
    end
    ask.kept_citations[i] = nil
  end
end

--- Before ask's own suggested edit is applied to rows first..last (0-based, inclusive)
--- of bufnr: marks the citations of ask on those rows. The server finds a citation again
--- by its text, so one whose lines the edit rewrote is gone for it; but the answer cited
--- the lines it then changed, and the citation stays on them. Returns a function that
--- takes the marks back (the edit was not applied).
---@param ask table
---@param bufnr integer
---@param uri string
---@param first integer
---@param last integer
---@return fun()
function M.keep_citations(ask, bufnr, uri, first, last)
  local positions = M.positions(ask)
  ask.kept_citations = ask.kept_citations or {}
  local made = {}
  for i, citation in ipairs(ask.result and ask.result.citations or {}) do
    local at = positions[i]
    local on_rows = at.lnum - 1 <= last and at.end_lnum - 1 >= first
    if citation.uri == uri and on_rows and not at.gone and not ask.kept_citations[i] then
      local row = math.min(at.lnum - 1, math.max(vim.api.nvim_buf_line_count(bufnr) - 1, 0))
      -- Left gravity: text the edit inserts where the mark is does not push it down.
      ask.kept_citations[i] = {
        buf = bufnr,
        id = vim.api.nvim_buf_set_extmark(bufnr, kept_ns, row, 0, { right_gravity = false }),
      }
      table.insert(made, i)
    end
  end
  return function()
    for _, i in ipairs(made) do
      drop_kept(ask, i)
    end
  end
end

--- The current 1-based lines of each citation of ask. A citation whose diagnostic was
--- seen and is now gone keeps its last place, marked gone, unless the answer's own edit
--- rewrote it (keep_citations): then it is where that edit left it.
---@param ask table
---@return table<integer, {lnum: integer, end_lnum: integer, gone: boolean}>
function M.positions(ask)
  local citations = ask.result and ask.result.citations or {}
  ask.citation_seen = ask.citation_seen or {}
  local out = {}
  local current = citations_readable(ask)
  for i, citation in ipairs(citations) do
    local span = (citation.endLine or citation.line) - citation.line
    local seen = ask.citation_seen[i]
    local d = current and match_citation(ask, i)
    local kept = not d and kept_line(ask, i)
    if kept then
      ask.kept_citations[i].lost = true
      ask.citation_seen[i] = kept
      out[i] = { lnum = kept, end_lnum = kept + span, gone = false }
    elseif d then
      -- Found again once lost (the edit undone, say): the server follows it again, and
      -- says when it goes. (Before the server republished, the diagnostic from before the
      -- edit is still there: that one says nothing.)
      if ask.kept_citations and ask.kept_citations[i] and ask.kept_citations[i].lost then
        drop_kept(ask, i)
      end
      -- The diagnostic marks the first line only; `data` has the lines it covers now.
      local data = data_of(d)
      if data and tonumber(data.line) and tonumber(data.endLine) then
        span = math.max(0, data.endLine - data.line)
      end
      ask.citation_seen[i] = d.lnum + 1
      out[i] = { lnum = d.lnum + 1, end_lnum = d.lnum + 1 + span, gone = false }
    elseif current and seen then
      out[i] = { lnum = seen, end_lnum = seen + span, gone = true }
    else
      local lnum = seen or citation.line
      out[i] = { lnum = lnum, end_lnum = lnum + span, gone = false }
    end
  end
  return out
end

--- The suggested-edit diagnostic of an edit, if the server still offers it.
---@param edit table SuggestedEdit
---@return vim.Diagnostic?
function M.edit_diagnostic(edit)
  for _, d in ipairs(diagnostics(edit.uri, 'suggested-edit')) do
    local data = data_of(d)
    if data and data.editId == edit.id then
      return d
    end
  end
  return nil
end

--- The URIs whose diagnostics matter for ask.
---@param ask table
---@return table<string, true>
function M.uris(ask)
  local uris = {}
  local result = ask.result or {}
  for _, c in ipairs(result.citations or {}) do
    uris[c.uri] = true
  end
  for _, e in ipairs(result.edits or {}) do
    uris[e.uri] = true
  end
  return uris
end

return M
