Content-Length: 5

{"a":
Content-Length: -3

