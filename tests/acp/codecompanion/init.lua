-- Loads CodeCompanion + plenary from the local checkouts and runs the configuration
-- extracted verbatim from docs/acp.md (run.sh writes it to $CC_CONFIG).
local root = assert(os.getenv("CC_ROOT"))
vim.opt.rtp:prepend(root .. "/pack/plenary.nvim")
vim.opt.rtp:prepend(root .. "/pack/codecompanion.nvim")
vim.opt.swapfile = false

-- Record every notification (CodeCompanion reports errors through vim.notify).
_G.NOTIFICATIONS = {}
vim.notify = function(msg, level, opts)
  table.insert(_G.NOTIFICATIONS, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  io.stderr:write(("[notify %s] %s\n"):format(tostring(level), tostring(msg)))
end

-- Only addition to the docs' configuration: a verbose CodeCompanion log.
local cc = require("codecompanion")
local setup = cc.setup
cc.setup = function(opts)
  opts.opts = opts.opts or {}
  opts.opts.log_level = "TRACE"
  return setup(opts)
end
dofile(assert(os.getenv("CC_CONFIG")))
