-- Keyed payment intent creates for wrk: every request carries an
-- Idempotency-Key of its own (run id, thread, counter), so each one is a
-- first request that creates an intent. Any answer other than 201 is counted
-- and printed at the end. Arguments after "--": the secret key, a run id.
local body = '{"amount":1500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377123456","description":"bench"}'
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  key, run = args[1], args[2] or tostring(os.time())
  n, bad, first_bad = 0, 0, ""
end

function request()
  n = n + 1
  return wrk.format("POST", "/v1/payment_intents", {
    ["Authorization"] = "Bearer " .. key,
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = run .. "-" .. tid .. "-" .. n,
  }, body)
end

function response(status, headers, resp)
  if status ~= 201 then
    bad = bad + 1
    if first_bad == "" then first_bad = status .. " " .. resp:sub(1, 200) end
  end
end

function done(summary, latency, requests)
  local total, example = 0, ""
  for _, t in ipairs(threads) do
    total = total + t:get("bad")
    if example == "" then example = t:get("first_bad") end
  end
  io.write(string.format("answers other than 201: %d %s\n", total, example))
end
