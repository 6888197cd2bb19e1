import json, os, socket, sys, time
import sys
print("arg=" + repr(sys.argv[1:]), flush=True)
cfg = json.loads(os.environ["TF_CONFIG"])
task = cfg["task"]; me = cfg["cluster"][task["type"]][task["index"]]
host, port = me.rsplit(":", 1)
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); srv.bind((host, int(port))); srv.listen(16)
if task["type"] == "ps":
    while True:
        c, _ = srv.accept(); c.sendall(b"ps" + str(task["index"]).encode()); c.close()
else:
    reached = []
    for addr in cfg["cluster"]["ps"]:
        h, p = addr.rsplit(":", 1)
        for _ in range(600):  # up to 30 s for a slow machine
            try:
                s = socket.create_connection((h, int(p))); reached.append(s.recv(16).decode()); s.close(); break
            except OSError: time.sleep(0.05)
    print(f"{task['type']} {task['index']} reached {reached}", flush=True)
    print(f"reached={len(reached)}")
    sys.exit(0 if len(reached) == len(cfg["cluster"]["ps"]) else 1)
