-- A minimal fuzzy picker: scores candidates against a prompt.
local M = {}
local H = {}

M.config = {
  -- How many results to show at most
  limit = 50,
  case_sensitive = false,
}

--- Set up the module.
---@param config table|nil Options, merged into the defaults
function M.setup(config)
  M.config = vim.tbl_deep_extend("force", M.config, config or {})
end

--- Score `candidate` against `prompt`: higher is better, nil means no match.
M.score = function(prompt, candidate)
  if not M.config.case_sensitive then
    prompt, candidate = prompt:lower(), candidate:lower()
  end
  local pos, score = 1, 0
  for i = 1, #prompt do
    local found = candidate:find(prompt:sub(i, i), pos, true)
    if found == nil then return nil end
    score = score - (found - pos)
    pos = found + 1
  end
  return score
end

function M.pick(prompt, candidates)
  local scored = {}
  for _, c in ipairs(candidates) do
    local s = M.score(prompt, c)
    if s ~= nil then table.insert(scored, { item = c, score = s }) end
  end
  table.sort(scored, H.by_score)
  return vim.list_slice(scored, 1, M.config.limit)
end

H.by_score = function(a, b) return a.score > b.score end

local function unused() end

return M
