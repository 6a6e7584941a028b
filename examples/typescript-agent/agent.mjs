// @ts-check: TypeScript checks this file (JSDoc types); Node runs it as it is, `node agent.mjs`
// (Node 18 or later, standard library only).
//
// A support agent with its own JSON (not goldgate's protocol) that streams server-sent events
// and keeps its session in a cookie. POST /chat {"input": {"content"}, "metadata"} answers
// text/event-stream: {"type": "delta", "text"} and {"type": "tool", "call": {"name", "arguments"}}.
// PORT sets the port (default 8000; 0 picks a free one); the first line printed says where.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";

/** @type {Map<string, string>} session id -> the order the conversation is about */
const orders = new Map();

const server = createServer(async (req, res) => {
  if (req.method !== "POST") return void res.writeHead(200).end("{}"); // a health check for CI
  let raw = "";
  for await (const chunk of req) raw += chunk;
  /** @type {{input: {content: string}, metadata?: Record<string, string>}} */
  const request = JSON.parse(raw);
  const session = /sid=([\w-]+)/.exec(req.headers.cookie ?? "")?.[1] ?? randomUUID();
  res.writeHead(200, { "Content-Type": "text/event-stream", "Set-Cookie": `sid=${session}; HttpOnly` });
  /** @param {object} event */
  const send = (event) => res.write(`data: ${JSON.stringify(event)}\n\n`);
  const order = /ORD-\d+/.exec(request.input.content)?.[0];
  if (order) {
    orders.set(session, order);
    send({ type: "tool", call: { name: "lookup_order", arguments: JSON.stringify({ order_id: order }) } });
    send({ type: "delta", text: `Your order ${order} ` });
    send({ type: "delta", text: `has ${request.metadata?.order_status ?? "been received"}.` });
  } else if (orders.has(session)) {
    send({ type: "delta", text: `${orders.get(session)} should arrive by April 18th.` });
  } else {
    send({ type: "delta", text: "Which order? Please give me its number." });
  }
  res.end("data: [DONE]\n\n");
});

server.listen(Number(process.env.PORT ?? 8000), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : "";
  console.log(`listening on http://127.0.0.1:${port}`);
});
