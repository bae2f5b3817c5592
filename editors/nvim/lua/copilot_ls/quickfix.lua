-- The quickfix list of an answer's citations: pushed once per answer, then kept on the
-- lines the server's republished diagnostics give (track.lua) as the documents change.
local render = require('copilot_ls.render')
local track = require('copilot_ls.track')

local M = {}

---@param ask table
---@return table[] items
local function items_of(ask)
  local items = {}
  local positions = track.positions(ask)
  for i, citation in ipairs(ask.result and ask.result.citations or {}) do
    local at = positions[i]
    table.insert(items, {
      filename = vim.uri_to_fname(citation.uri),
      lnum = at.lnum,
      end_lnum = at.end_lnum,
      col = 1,
      text = (citation.note and citation.note ~= '') and citation.note or ask.question,
      valid = 1,
    })
  end
  return items
end

---@param ask table
---@return string
local function title_of(ask)
  return 'copilot-ls: ' .. (render.split_lines(ask.question)[1] or '')
end

--- Puts the citations of a finished ask in a new quickfix list. ' ' pushes a new list,
--- so :colder gets the user's previous list back.
---@param ask table
function M.set(ask)
  local items = items_of(ask)
  if #items == 0 then
    return
  end
  vim.fn.setqflist({}, ' ', { title = title_of(ask), items = items })
  ask.quickfix_id = vim.fn.getqflist({ id = 0 }).id
end

--- Moves the items of the ask's list (wherever it is on the quickfix stack) to where its
--- citations are now. A list the user has since freed is left alone.
---@param ask table
function M.update(ask)
  local id = ask.quickfix_id
  if not id or vim.fn.getqflist({ id = id }).id ~= id then
    return
  end
  local items = items_of(ask)
  local old = vim.fn.getqflist({ id = id, items = 1 }).items
  local same = #old == #items
  for i = 1, same and #items or 0 do
    if old[i].lnum ~= items[i].lnum or old[i].end_lnum ~= items[i].end_lnum then
      same = false
      break
    end
  end
  if not same then
    vim.fn.setqflist({}, 'r', { id = id, title = title_of(ask), items = items })
  end
end

return M
