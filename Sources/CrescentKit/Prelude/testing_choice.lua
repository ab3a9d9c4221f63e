-- testing_choice.lua: which tests a run of `crescent test` takes, as busted chooses (part of
-- testing.lua, loaded after it with its values, the runner and the state its parts share, S):
-- options.filter (Lua patterns on full names), options.tags and options.exclude_tags (`#tag` in
-- them); and the tag words the walk saw, for runner.tagged.
local T, options, assertions, doubles, fakes, environments, runner, S = ...
local ipairs, pairs = ipairs, pairs
local sfind = string.find

-- Whether the run chooses tests at all: a run that does not takes every test without asking.
local choosing = options.filter ~= nil or (options.tags and #options.tags > 0) or (options.exclude_tags and #options.exclude_tags > 0)

local function hastag(name, tags)
  for _, tag in ipairs(tags or {}) do if sfind(name, "#" .. tag) then return true end end
  return false
end

-- Whether the run takes a test (asked only when `choosing`): options.filter (Lua patterns on full
-- names, of which one must match, as busted ORs its --filter options), options.tags and
-- options.exclude_tags (`#tag` in them), as busted chooses.
local function filtered(name)
  if options.filter == nil then return true end
  for _, pattern in ipairs(options.filter) do
    if sfind(name, pattern) ~= nil then return true end
  end
  return false
end
local function chosen(name)
  return filtered(name)
    and (options.tags == nil or #options.tags == 0 or hastag(name, options.tags))
    and not hastag(name, options.exclude_tags)
end

-- The --tags and --exclude-tags words some name the walk reached has, chosen or not (runner.next
-- notes each entry's name).
local taggedSeen = {}
local function noted(name)
  for _, tags in ipairs({ options.tags or {}, options.exclude_tags or {} }) do
    for _, tag in ipairs(tags) do
      if not taggedSeen[tag] and hastag(name, { tag }) then taggedSeen[tag] = true end
    end
  end
end

-- The tag words some name had: the run names one no file has, which would otherwise be dropped
-- without a word when another one matched.
function runner.tagged()
  local tagged = {}
  for tag in pairs(taggedSeen) do tagged[#tagged + 1] = tag end
  return tagged
end

S.choosing, S.chosen, S.hastag, S.noted = choosing, chosen, hastag, noted
