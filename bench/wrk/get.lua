-- Authenticated GETs for wrk: every request is GET PATH with the secret key
-- as its bearer. Any answer other than 200 is counted and printed at the end
-- (it must be 0). Arguments after "--": the secret key, the path.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  wrk.headers["Authorization"] = "Bearer " .. args[1]
  wrk.path = args[2]
  bad, first_bad = 0, ""
end

function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    if first_bad == "" then first_bad = status .. " " .. body end
  end
end

function done(summary, latency, requests)
  local total, first = 0, ""
  for _, t in ipairs(threads) do
    total = total + t:get("bad")
    if first == "" then first = t:get("first_bad") or "" end
  end
  io.write(string.format("answers other than 200: %d %s\n", total, first))
end
