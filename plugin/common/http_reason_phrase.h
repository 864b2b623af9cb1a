// HttpReasonPhrase: the reason phrase of an HTTP status line the plugin's servers write (the
// plugin API's and the metrics port's), e.g. "Content Too Large" for 413.
#pragma once

namespace skald {

// The phrase for `status` (RFC 9110), or "Error" for one the servers do not send.
const char* HttpReasonPhrase(int status);

}  // namespace skald
