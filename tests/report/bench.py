# The seed's benchmark in miniature: each rank reports its rate, and rank 0 the total as
# images/sec (the metric the seed's step reads).
import sys
from mpi4py import MPI

c = MPI.COMM_WORLD
batch = int(sys.argv[1])
rate = 100.0 + batch / 4 + c.Get_rank()
print(f"rank {c.Get_rank()}: {rate} images a second", flush=True)
total = c.allreduce(rate)
if c.Get_rank() == 0:
    print(f"images/sec={total}", flush=True)
