"""A support agent with its own JSON (not goldgate's protocol), Python standard library only.

POST /chat {"message", "session_id", "context"} -> {"reply", "session_id", "actions"}.
PORT sets the port (default 8000; 0 picks a free one); the first line printed says where it listens.
"""
import json, os, re, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ORDERS = {}  # session id -> the order the conversation is about


class Chat(BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        session = request.get("session_id") or str(uuid.uuid4())
        found = re.search(r"ORD-\d+", request.get("message", ""))
        actions = []
        if found:
            ORDERS[session] = found.group()
            actions.append({"tool": "lookup_order", "input": {"order_id": found.group()}})
            status = request.get("context", {}).get("order_status", "been received")
            reply = f"Your order {found.group()} has {status}."
        elif session in ORDERS:
            reply = f"{ORDERS[session]} should arrive by April 18th."
        else:
            reply = "Which order? Please give me its number."
        self.answer(200, json.dumps({"reply": reply, "session_id": session, "actions": actions}))

    def do_GET(self):  # a health check, for CI to wait on
        self.answer(200, "{}")

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8000"))), Chat)
print(f"listening on http://127.0.0.1:{server.server_port}", flush=True)
server.serve_forever()
