-- Where the last answer's citations and suggested edits are now. The server republishes
-- its diagnostics as the cited documents change (PROTOCOL.md section 5: code `citation`,
-- and `suggested-edit` with `data.editId`), so they, not the AskResult's lines, say
-- where a citation's text sits and whether an edit is still offered.
local M = {}

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

--- The diagnostic of citation i, matched among those of its document: by the citation
--- index in its `data` (`{citation, line, endLine}`), else (an older server) by order
--- when each citation still has one, else by message (the note or the question) and
--- nearness to the cited line.
---@param citations table[]
---@param i integer
---@param question string
---@return vim.Diagnostic?
local function match_citation(citations, i, question)
  local citation = citations[i]
  local candidates = diagnostics(citation.uri, 'citation')
  -- The server says which citation (its 0-based index) each diagnostic is.
  local indexed = false
  for _, d in ipairs(candidates) do
    local data = data_of(d)
    if data and data.citation ~= nil then
      indexed = true
      if tonumber(data.citation) == i - 1 then
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
  local message = (citation.note and citation.note ~= '') and citation.note or question
  local best, best_distance = nil, math.huge
  for _, d in ipairs(candidates) do
    if d.message == message then
      local distance = math.abs(d.lnum + 1 - citation.line)
      if distance < best_distance then
        best, best_distance = d, distance
      end
    end
  end
  return best
end

--- The current 1-based lines of each citation of ask. A citation whose diagnostic was
--- seen and is now gone keeps its last place, marked gone.
---@param ask table
---@return table<integer, {lnum: integer, end_lnum: integer, gone: boolean}>
function M.positions(ask)
  local citations = ask.result and ask.result.citations or {}
  ask.citation_seen = ask.citation_seen or {}
  local out = {}
  local current = M.is_current(ask)
  for i, citation in ipairs(citations) do
    local span = (citation.endLine or citation.line) - citation.line
    local seen = ask.citation_seen[i]
    local d = current and match_citation(citations, i, ask.question)
    if d then
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
