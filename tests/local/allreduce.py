import os, torch, torch.distributed as dist
import sys
print("arg=" + repr(sys.argv[1:]), flush=True)
dist.init_process_group("gloo")
r = dist.get_rank(); w = dist.get_world_size()
t = torch.tensor([float(r + 1)])
dist.all_reduce(t)
print(f"rank {r}/{w} local {os.environ['LOCAL_RANK']} sum={t.item()}", flush=True)
if r == 0: print(f"allreduce_sum={t.item()}")
dist.destroy_process_group()
