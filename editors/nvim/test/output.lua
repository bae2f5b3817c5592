-- Busted output handler: busted's own terminal output, plus the counts written to
-- $NVIM_TEST_RESULT (as "passed failed") so run.sh can add up all spec files.
return function(options)
  local busted = require('busted')
  local term = require('term')
  local tty = io.type(io.stdout) == 'file' and term.isatty(io.stdout)
  local handler = require('busted.outputHandlers.' .. (tty and 'utfTerminal' or 'plainTerminal'))(
    options
  )
  local subscribe = handler.subscribe
  handler.subscribe = function(self, opts)
    subscribe(self, opts)
    busted.subscribe({ 'exit' }, function()
      local file = os.getenv('NVIM_TEST_RESULT')
      if file then
        local f = assert(io.open(file, 'w'))
        f:write(('%d %d\n'):format(
          handler.successesCount,
          handler.failuresCount + handler.errorsCount
        ))
        f:close()
      end
      return nil, true
    end)
  end
  return handler
end
