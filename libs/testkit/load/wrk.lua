-- The requests of sharenote's load benchmarks, for wrk (libs/testkit/load/wrk.go).
-- The one script argument names a file of lines "key value": "method M", "path P" (one or
-- more; each request takes one at random), "header Name: value", "token T" (one or more:
-- each request sends the next as a bearer token, as clients of many accounts would) and
-- "body FILE". Every request comes from a random client address (X-Forwarded-For), so
-- that per-IP limits see many clients, as behind a real ingress. done prints one line,
-- "wrk-result k=v ...", with the counts and the latency percentiles in microseconds.
-- With SHARENOTE_WRK_PACE_MS in the environment (load.Config.Pace), each connection
-- waits that many milliseconds after an answer before its next request; wrk decides
-- whether a script has delay() when it loads it, so without the variable there is none.

local threads = 0

local pace = tonumber(os.getenv("SHARENOTE_WRK_PACE_MS") or "")
if pace then
   function delay()
      return pace
   end
end

function setup(thread)
   threads = threads + 1
   thread:set("id", threads)
end

local method, body = "GET", nil
local paths, tokens, headers = {}, {}, {}
local turn = 0

function init(args)
   math.randomseed(os.time() * 1000 + (id or 0))
   for line in io.lines(args[1]) do
      local k, v = line:match("^(%S+) (.*)$")
      if k == "method" then
         method = v
      elseif k == "path" then
         paths[#paths + 1] = v
      elseif k == "token" then
         tokens[#tokens + 1] = "Bearer " .. v
      elseif k == "header" then
         local name, value = v:match("^([^:]+):%s*(.*)$")
         headers[name] = value
      elseif k == "body" then
         local f = assert(io.open(v, "rb"))
         body = f:read("*a")
         f:close()
      end
   end
   assert(#paths > 0, "no path")
   turn = math.random(#tokens + 1)
end

-- clientAddress is a random public-looking IPv4 address: not 0, 10, 127 or 224 and above.
local function clientAddress()
   local a = math.random(11, 222)
   if a == 127 then a = 128 end
   return a .. "." .. math.random(0, 255) .. "." .. math.random(0, 255) .. "." .. math.random(1, 254)
end

function request()
   headers["X-Forwarded-For"] = clientAddress()
   if #tokens > 0 then
      turn = turn % #tokens + 1
      headers["Authorization"] = tokens[turn]
   end
   return wrk.format(method, paths[math.random(#paths)], headers, body)
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format("wrk-result duration_us=%d requests=%d bytes=%d connect=%d read=%d write=%d status=%d timeout=%d p50_us=%d p90_us=%d p99_us=%d\n",
      summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
