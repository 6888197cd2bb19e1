Content-Length: 83

{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}Content-Length: 57

{"jsonrpc": "2.0", "method": "initialized", "params": {}}Content-Length: 1407

{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe", "languageId": "pipe", "version": 1, "text": "# mpi_run.pipe: distributed ResNet-101 benchmark with Horovod over MPI\nuse arena\n\npipeline mpi_run {\n  description \"shows how to run mpi job.\"\n\n  param image: string = \"uber/horovod:0.13.11-tf1.10.0-torch0.4.0-py3.5\"\n  param batch_size: int = 64\n  param optimizer: string = \"momentum\"\n  param sync_source: string = \"https://github.com/tensorflow/benchmarks.git\"\n  param git_sync_branch: string = \"cnn_tf_v1.9_compatible\"\n  param data: string = \"user-susan:/training\"\n  param gpus: int = 1\n  param workers: int = 1\n  param cpu_limit: string = \"2\"\n  param metric: string = \"images/sec\"\n  param memory_limit: string = \"10Gi\"\n\n  step all_reduce = mpi_job(\n    image: image,\n    env: {NCCL_DEBUG: \"INFO\", GIT_SYNC_BRANCH: git_sync_branch},\n    data: [data],\n    workers: workers,\n    sync_source: sync_source,\n    gpus: gpus,\n    cpu_limit: cpu_limit,\n    memory_limit: memory_limit,\n    metrics: [metric],\n    command: \"\"\"\n      mpirun python code/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py \\\n        --model resnet101 --batch_size ${batch_size} --variable_update horovod \\\n        --optimizer ${optimizer} --summary_verbosity=3 --save_summaries_steps=10\n    \"\"\",\n  )\n}\n"}}}Content-Length: 164

{"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 0, "character": 35}}}Content-Length: 169

{"jsonrpc": "2.0", "id": 3, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 0, "character": 35}}}Content-Length: 169

{"jsonrpc": "2.0", "id": 4, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 0, "character": 35}}}Content-Length: 164

{"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 9, "character": 38}}}Content-Length: 169

{"jsonrpc": "2.0", "id": 6, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 9, "character": 38}}}Content-Length: 169

{"jsonrpc": "2.0", "id": 7, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 9, "character": 38}}}Content-Length: 165

{"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 18, "character": 14}}}Content-Length: 170

{"jsonrpc": "2.0", "id": 9, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 18, "character": 14}}}Content-Length: 171

{"jsonrpc": "2.0", "id": 10, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 18, "character": 14}}}Content-Length: 166

{"jsonrpc": "2.0", "id": 11, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 27, "character": 11}}}Content-Length: 171

{"jsonrpc": "2.0", "id": 12, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 27, "character": 11}}}Content-Length: 171

{"jsonrpc": "2.0", "id": 13, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}, "position": {"line": 27, "character": 11}}}Content-Length: 132

{"jsonrpc": "2.0", "id": 14, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe"}}}Content-Length: 1408

{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "file:///w/mpi_run.pipe", "version": 2}, "contentChanges": [{"text": "# mpi_run.pipe: distributed ResNet-101 benchmark with Horovod over MPI\nuse arena\n\npipeline mpi_run {\n  description \"shows how to run mpi job.\"\n\n  param image: string = \"uber/horovod:0.13.11-tf1.10.0-torch0.4.0-py3.5\"\n  param batch_size: int = 64\n  param optimizer: string = \"momentum\"\n  param sync_source: string = \"https://github.com/tensorflow/benchmarks.git\"\n  param git_sync_branch: string = \"cnn_tf_v1.9_compatible\"\n  param data: string = \"user-susan:/training\"\n  param gpus: int = 1\n  param workers: int = 1\n  param cpu_limit: string = \"2\"\n  param metric: string = \"images/sec\"\n  param memory_limit: string = \"10Gi\"\n\n  stp all_reduce = mpi_job(\n    image: image,\n    env: {NCCL_DEBUG: \"INFO\", GIT_SYNC_BRANCH: git_sync_branch},\n    data: [data],\n    workers: workers,\n    sync_source: sync_source,\n    gpus: gpus,\n    cpu_limit: cpu_limit,\n    memory_limit: memory_limit,\n    metrics: [metric],\n    command: \"\"\"\n      mpirun python code/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py \\\n        --model resnet101 --batch_size ${batch_size} --variable_update horovod \\\n        --optimizer ${optimizer} --summary_verbosity=3 --save_summaries_steps=10\n    \"\"\",\n  )\n}\n"}]}}Content-Length: 50

{"jsonrpc": "2.0", "id": 15, "method": "shutdown"}Content-Length: 36

{"jsonrpc": "2.0", "method": "exit"}