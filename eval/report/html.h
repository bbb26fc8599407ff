/* eval/report/html.h — text into HTML, and user strings into file names (the results browser).
 *
 * Every string a page shows comes from user data (image ids, network names, paths, commands), so
 * it goes through html_escape: & < > " ' become &amp; &lt; &gt; &quot; &#39;, which is safe both
 * as element text and inside a double-quoted attribute.  Bytes below 0x20 other than tab and
 * newline become U+FFFD (a control character is never markup either).
 *
 * File names: html_safe_name keeps [A-Za-z0-9._-] and replaces every other byte (and a leading
 * '.', so that no file is hidden) by '_'; when it had to change anything, or the name is empty, it
 * appends '~' and the first 10 hex digits of the name's sha256, so that two ids never share a
 * file.  The result needs no escaping in an href (no '%', '#', '?', '/', quotes or spaces).
 *
 *     kc_buf b = {0};
 *     html_escape(&b, "a<b & \"c\"");          // a&lt;b &amp; &quot;c&quot;
 *     char *f = html_safe_name("2007_000063");  // "2007_000063"
 *     char *g = html_safe_name("x<&\"'.jpg");    // "x____.jpg~" and 10 hex digits
 */
#ifndef KC_HTML_H
#define KC_HTML_H
#include "pipeline/kc.h"

/* Appends s, escaped, to b (nothing for NULL). */
void html_escape(kc_buf *b, const char *s);
/* A new string: s escaped. */
char *html_escaped(const char *s);
/* Appends s as a double-quoted JavaScript string literal: printable ASCII as it is but for
 * " \ ' < > &, those and every other character as \uXXXX (UTF-8 decoded; a byte that is not
 * UTF-8 as U+FFFD), so that the literal is safe in a script file and in a page alike. */
void html_js_string(kc_buf *b, const char *s);
/* A new string: a file-name-safe, collision-free form of s (above). */
char *html_safe_name(const char *s);
#endif
