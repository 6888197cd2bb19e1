from mpi4py import MPI
import sys
print("arg=" + repr(sys.argv[1:]), flush=True)
c = MPI.COMM_WORLD
s = c.allreduce(c.Get_rank() + 1)
print(f"rank {c.Get_rank()} of {c.Get_size()} sum={s}", flush=True)
if c.Get_rank() == 0: print(f"ranks={c.Get_size()} total={s}")
