Content-Length: 83

{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}Content-Length: 57

{"jsonrpc": "2.0", "method": "initialized", "params": {}}Content-Length: 1941

{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe", "languageId": "pipe", "version": 1, "text": "# control_flow: conditions (nested, else-if, not/and/or), loops over literal lists,\n# maps, list parameters and step outputs, nested loops, and a finally block.\n\nop count(path: string) -> (files: int, names: list<string>) {\n  image \"busybox:1.36\"\n  command \"ls ${path} | wc -l > /tmp/files; ls ${path} | sed 's/.*/\\\"&\\\"/' | paste -sd, | sed 's/.*/[&]/' > /tmp/names\"\n  outputs {files: \"/tmp/files\", names: \"/tmp/names\"}\n}\n\nop echo(message: string) {\n  image \"busybox:1.36\"\n  command [\"echo\", \"${message}\"]\n}\n\npipeline control_flow {\n  param path: string = \"/data\"\n  param mode: string in [\"quick\", \"full\"] = \"quick\"\n  param min_files: int = 1\n  param threshold: float = 0.5\n  param dry_run: bool = false\n  param shards: list<string> = [\"a\", \"b\"]\n\n  step scan = count(path: path)\n\n  if scan.files >= min_files and not dry_run {\n    if mode == \"full\" or threshold < 0.25 {\n      step full = echo(message: \"full run over ${path}\")\n    } else {\n      step quick = echo(message: \"quick run\")\n    }\n  } else if dry_run {\n    step dry = echo(message: \"dry run\")\n  } else {\n    step empty = echo(message: \"no files\") after scan\n  }\n\n  for shard in shards {\n    for size in [1, 2, 3] {\n      step each = echo(message: \"${shard}/${size} of ${scan.files}\")\n    }\n  }\n\n  for name in scan.names {\n    step per_file = echo(message: name)\n  }\n\n  for run in [{name: \"small\", lr: \"0.1\"}, {name: \"large\", lr: \"0.01\"}] {\n    if run.name == \"small\" {\n      step announce = echo(message: \"run ${run.name} with lr ${run.lr}\") after scan\n    }\n  }\n\n  finally {\n    step cleanup = echo(message: \"cleaning up ${path}\")\n    step notify = echo(message: \"finished\") after cleanup\n  }\n}\n"}}}Content-Length: 169

{"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 0, "character": 41}}}Content-Length: 174

{"jsonrpc": "2.0", "id": 3, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 0, "character": 41}}}Content-Length: 174

{"jsonrpc": "2.0", "id": 4, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 0, "character": 41}}}Content-Length: 170

{"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 14, "character": 11}}}Content-Length: 175

{"jsonrpc": "2.0", "id": 6, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 14, "character": 11}}}Content-Length: 175

{"jsonrpc": "2.0", "id": 7, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 14, "character": 11}}}Content-Length: 170

{"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 28, "character": 22}}}Content-Length: 175

{"jsonrpc": "2.0", "id": 9, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 28, "character": 22}}}Content-Length: 176

{"jsonrpc": "2.0", "id": 10, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 28, "character": 22}}}Content-Length: 171

{"jsonrpc": "2.0", "id": 11, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 42, "character": 13}}}Content-Length: 176

{"jsonrpc": "2.0", "id": 12, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 42, "character": 13}}}Content-Length: 176

{"jsonrpc": "2.0", "id": 13, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 42, "character": 13}}}Content-Length: 170

{"jsonrpc": "2.0", "id": 14, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 56, "character": 0}}}Content-Length: 175

{"jsonrpc": "2.0", "id": 15, "method": "textDocument/definition", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 56, "character": 0}}}Content-Length: 175

{"jsonrpc": "2.0", "id": 16, "method": "textDocument/completion", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}, "position": {"line": 56, "character": 0}}}Content-Length: 137

{"jsonrpc": "2.0", "id": 17, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe"}}}Content-Length: 1942

{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "file:///w/control_flow.pipe", "version": 2}, "contentChanges": [{"text": "# control_flow: conditions (nested, else-if, not/and/or), loops over literal lists,\n# maps, list parameters and stp outputs, nested loops, and a finally block.\n\nop count(path: string) -> (files: int, names: list<string>) {\n  image \"busybox:1.36\"\n  command \"ls ${path} | wc -l > /tmp/files; ls ${path} | sed 's/.*/\\\"&\\\"/' | paste -sd, | sed 's/.*/[&]/' > /tmp/names\"\n  outputs {files: \"/tmp/files\", names: \"/tmp/names\"}\n}\n\nop echo(message: string) {\n  image \"busybox:1.36\"\n  command [\"echo\", \"${message}\"]\n}\n\npipeline control_flow {\n  param path: string = \"/data\"\n  param mode: string in [\"quick\", \"full\"] = \"quick\"\n  param min_files: int = 1\n  param threshold: float = 0.5\n  param dry_run: bool = false\n  param shards: list<string> = [\"a\", \"b\"]\n\n  step scan = count(path: path)\n\n  if scan.files >= min_files and not dry_run {\n    if mode == \"full\" or threshold < 0.25 {\n      step full = echo(message: \"full run over ${path}\")\n    } else {\n      step quick = echo(message: \"quick run\")\n    }\n  } else if dry_run {\n    step dry = echo(message: \"dry run\")\n  } else {\n    step empty = echo(message: \"no files\") after scan\n  }\n\n  for shard in shards {\n    for size in [1, 2, 3] {\n      step each = echo(message: \"${shard}/${size} of ${scan.files}\")\n    }\n  }\n\n  for name in scan.names {\n    step per_file = echo(message: name)\n  }\n\n  for run in [{name: \"small\", lr: \"0.1\"}, {name: \"large\", lr: \"0.01\"}] {\n    if run.name == \"small\" {\n      step announce = echo(message: \"run ${run.name} with lr ${run.lr}\") after scan\n    }\n  }\n\n  finally {\n    step cleanup = echo(message: \"cleaning up ${path}\")\n    step notify = echo(message: \"finished\") after cleanup\n  }\n}\n"}]}}Content-Length: 50

{"jsonrpc": "2.0", "id": 18, "method": "shutdown"}Content-Length: 36

{"jsonrpc": "2.0", "method": "exit"}