//! Server-sent events (the WHATWG `text/event-stream` format), read line by line as they
//! arrive: `data:` lines gather into an event, which a blank line ends, named by its `event:`
//! line (`message` when it has none). Comments (`:`), and the `id` and `retry` fields are read
//! past.

/// One event: its name and its data.
#[derive(Debug, PartialEq)]
pub struct Event {
    pub name: String,
    pub data: Vec<u8>,
}

/// The event being gathered.
#[derive(Default)]
pub struct Events {
    data: Vec<u8>,
    name: Option<String>,
    /// Whether a `data` line came since the last event (an event of empty data is one).
    has_data: bool,
}

impl Events {
    /// Takes one line without its `\n` (a `\r` before it is dropped); returns the event a
    /// blank line ends.
    pub fn line(&mut self, line: &[u8]) -> Option<Event> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return self.finish();
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        } else if field == b"event" {
            self.name = Some(String::from_utf8_lossy(value).into_owned());
        }
        None
    }

    /// The event a stream ended in without its blank line, if any.
    pub fn finish(&mut self) -> Option<Event> {
        let name = self.name.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(Event {
            name: name.unwrap_or_else(|| "message".to_owned()),
            data: std::mem::take(&mut self.data),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_lines_gather_into_named_events_and_other_fields_are_read_past() {
        let mut events = Events::default();
        let stream =
            ": keep-alive\r\nevent: delta\r\ndata: {\"a\":\r\ndata:1}\r\n\r\nid: 2\n\ndata: [DONE]";
        let mut got: Vec<Event> = stream
            .split('\n')
            .filter_map(|line| events.line(line.as_bytes()))
            .collect();
        got.extend(events.finish());
        let event = |name: &str, data: &[u8]| Event {
            name: name.to_owned(),
            data: data.to_vec(),
        };
        assert_eq!(
            got,
            vec![event("delta", b"{\"a\":\n1}"), event("message", b"[DONE]")]
        );
    }
}
