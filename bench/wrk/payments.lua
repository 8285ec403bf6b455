-- Payment intents for wrk, in one of two modes.
--
-- "pairs": create+confirm pairs. A thread's connections share a queue of
-- created intents: a request is the confirm of the oldest one waiting, or a
-- keyed create when none waits (so every intent is created once and confirmed
-- once). A create carries its send time (monotonic clock, microseconds) in its
-- description, which the confirm's answer echoes: a pair's latency is from
-- the create sent to the confirm answered. Pairs answered in the first
-- WARMUP seconds are not counted.
--
-- "creates": every request is a keyed create with an Idempotency-Key of its
-- own (run id, thread, counter), so each one creates an intent; wrk's own
-- summary is the figure.
--
-- Any other answer is counted and printed at the end (it must be 0).
-- Arguments after "--": the secret key, a run id, the warm-up seconds
-- (default 2), the mode (default pairs).
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } payd_timespec;
int clock_gettime(int clk, payd_timespec *tp);
]]
local ts = ffi.new("payd_timespec")
local function now_us()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  key, run = args[1], args[2] or tostring(os.time())
  warm = tonumber(args[3] or "2")
  mode = args[4] or "pairs"
  n, bad, first_bad, npairs = 0, 0, "", 0
  lats = {}
  waiting, head, tail = {}, 1, 0
  t0 = now_us()
  auth = "Bearer " .. key
end

function request()
  if head <= tail then
    local id = waiting[head]
    waiting[head] = nil
    head = head + 1
    return wrk.format("POST", "/v1/payment_intents/" .. id .. "/confirm", {
      ["Authorization"] = auth,
      ["Content-Type"] = "application/json",
    }, '{"otp":"123456"}')
  end
  n = n + 1
  return wrk.format("POST", "/v1/payment_intents", {
    ["Authorization"] = auth,
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = run .. "-" .. tid .. "-" .. n,
  }, string.format('{"amount":1500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377123456","description":"bench %.0f"}', now_us()))
end

local function wrong(status, body)
  bad = bad + 1
  if first_bad == "" then first_bad = status .. " " .. body:sub(1, 200) end
end

function response(status, headers, body)
  if mode == "creates" then
    if status ~= 201 then wrong(status, body) end
    return
  end
  if status == 201 then
    local id = body:match('"id":"(pi_[^"]+)"')
    if not id then return wrong(status, body) end
    tail = tail + 1
    waiting[tail] = id
  elseif status == 200 and body:find('"status":"succeeded"', 1, true) then
    local now = now_us()
    if now - t0 < warm * 1e6 then return end
    local sent = tonumber(body:match('"description":"bench (%d+)"'))
    if not sent then return wrong(status, body) end
    npairs = npairs + 1
    lats[npairs] = now - sent
  else
    wrong(status, body)
  end
end

function done(summary, latency, requests)
  local total, wrongs, example, all = 0, 0, "", {}
  for _, t in ipairs(threads) do
    total = total + t:get("npairs")
    wrongs = wrongs + t:get("bad")
    if example == "" then example = t:get("first_bad") end
    for _, v in ipairs(t:get("lats")) do all[#all + 1] = v end
  end
  table.sort(all)
  local function pct(p)
    if #all == 0 then return 0 end
    return all[math.max(1, math.ceil(#all * p / 100))] / 1000
  end
  if threads[1]:get("mode") == "creates" then
    io.write(string.format("answers other than 201: %d %s\n", wrongs, example))
    return
  end
  local measured = summary.duration / 1e6 - threads[1]:get("warm")
  io.write(string.format("pairs %d pairs/s %.0f pair_p50_ms %.2f pair_p99_ms %.2f pair_max_ms %.2f (after %ss of warm-up)\n",
    total, total / measured, pct(50), pct(99), pct(100), threads[1]:get("warm")))
  io.write(string.format("wrong answers: %d %s\n", wrongs, example))
end
