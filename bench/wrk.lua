-- wrk script for the benchmark: picks each request at random from a file prepared by run.ts
-- (one request a line: METHOD<TAB>PATH[<TAB>JSON body]), pre-formatted once per thread, and
-- prints the summary as one JSON line prefixed "WRK_JSON " so run.ts need not parse wrk's text.
-- Usage: wrk -t1 -c10 -d5s -H 'Authorization: Bearer …' -s bench/wrk.lua http://127.0.0.1:3000 -- FILE

local prepared = {}
local preparedCount = 0

function init(args)
  local file = assert(io.open(args[1], "r"), "wrk.lua: cannot open the requests file")
  for line in file:lines() do
    local method, rest = line:match("^(%u+)\t(.*)$")
    if method ~= nil then
      local path, body = rest:match("^([^\t]*)\t(.*)$")
      if path == nil then path, body = rest, nil end
      local headers = {}
      for name, value in pairs(wrk.headers) do headers[name] = value end
      if method == "POST" or method == "PUT" then headers["Content-Type"] = "application/json" end
      preparedCount = preparedCount + 1
      prepared[preparedCount] = wrk.format(method, path, headers, body)
    end
  end
  file:close()
  assert(preparedCount > 0, "wrk.lua: the requests file holds no request")
  -- Threads start within the same second, so mix in the table's address to differ per thread.
  math.randomseed(os.time() + tonumber(tostring(prepared):match("0x(%x+)") or "0", 16) % 100000)
end

function request()
  return prepared[math.random(preparedCount)]
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    errors.connect, errors.read, errors.write, errors.status, errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
    latency.max, latency.mean))
end
