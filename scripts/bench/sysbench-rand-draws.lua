-- sysbench 1.0's default key draws, to set beside rmatrix's port (src/workloads/oltp/rand.rs):
--   sysbench scripts/bench/sysbench-rand-draws.lua --events=2000000 --time=0 --threads=1 run
-- prints one sysbench.rand.default(1, 10000) draw per event (--rand-type as given, default
-- special), among sysbench's own report lines.
function event()
  io.write(sysbench.rand.default(1, 10000), "\n")
end
