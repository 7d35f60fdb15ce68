/**
 * The e-mail message as Go's mime packages write it (the expected texts are what the real 0.25
 * sent in the e-mail differential test, or follow from Go's mime/quotedprintable rules).
 */
import { describe, expect, it } from 'vitest';
import { composeGoMail, goQEncode, goQuotedPrintable, rfc1123z } from '../../src/alertmanager/receivers/go-mail.js';
import { goHrefEscape, goHtmlEscape } from '../../src/alertmanager/template/email-page.js';

describe('Go mail encoding', () => {
  it('Q-encodes a header only when it needs it, in words of at most 75 characters, newlines kept as =0A', () => {
    expect(goQEncode('[FIRING:2] DiskFull (critical)')).toBe('[FIRING:2] DiskFull (critical)');
    expect(goQEncode('tab\tis fine')).toBe('tab\tis fine');
    expect(goQEncode('[FIRING]\nsecond line \u2014 \u2713 DiskFull disk "full" & 95% \u2265 limit')).toBe(
      '=?utf-8?q?[FIRING]=0Asecond_line_=E2=80=94_=E2=9C=93_DiskFull_disk_"full"?= =?utf-8?q?_&_95%_=E2=89=A5_limit?=',
    );
    expect(goQEncode('a=b?c_d\u00e9')).toBe('=?utf-8?q?a=3Db=3Fc=5Fd=C3=A9?=');
    // A character is never split across words.
    const words = goQEncode('\u00e9'.repeat(30)).split(' ');
    expect(words.map((w) => w.length)).toEqual([72, 72, 72]);
    expect(words[0]).toBe(`=?utf-8?q?${'=C3=A9'.repeat(10)}?=`);
  });

  it('writes quoted-printable as mime/quotedprintable: soft breaks before column 76, trailing blanks encoded, CRLF line ends', () => {
    // As the real 0.25 sent it.
    expect(goQuotedPrintable('<p>firing</p><a href="">db2</a><a href="http://prom.example/graph?g0.expr=disk_used&#43;%3E&#43;0.9&amp;g0.tab=1">db&lt;1&gt;</a>')).toBe(
      '<p>firing</p><a href=3D"">db2</a><a href=3D"http://prom.example/graph?g0.ex=\r\npr=3Ddisk_used&#43;%3E&#43;0.9&amp;g0.tab=3D1">db&lt;1&gt;</a>',
    );
    // An encoded byte does not fit in the last two columns: the line breaks before it.
    expect(goQuotedPrintable(`${'x'.repeat(73)}=`)).toBe(`${'x'.repeat(73)}=\r\n=3D`);
    expect(goQuotedPrintable('end \nnext\t\r\nlast ')).toBe('end=20\r\nnext=09\r\nlast=20');
    expect(goQuotedPrintable('\u2265')).toBe('=E2=89=A5');
    expect(goQuotedPrintable('x'.repeat(80))).toBe(`${'x'.repeat(75)}=\r\n${'x'.repeat(5)}`);
    expect(goQuotedPrintable('')).toBe('');
  });

  it('composes headers, Message-Id, Date, the two-space multipart header and every configured part, empty ones too', () => {
    const raw = composeGoMail({ headers: { To: 'a@b', Subject: 's', From: 'c@d' }, text: '', html: '<b>x</b>', hostname: 'host', now: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) }).toString();
    const boundary = /boundary=([0-9a-f]{60})\r\n/.exec(raw)![1]!;
    const msgId = /^Message-Id: (<\d+\.\d+@host>)\r\n/m.exec(raw)![1]!;
    expect(raw).toBe(
      `From: c@d\r\nSubject: s\r\nTo: a@b\r\nMessage-Id: ${msgId}\r\nDate: ${rfc1123z(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))}\r\nContent-Type: multipart/alternative;  boundary=${boundary}\r\nMIME-Version: 1.0\r\n\r\n` +
        `--${boundary}\r\nContent-Transfer-Encoding: quoted-printable\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n` +
        `\r\n--${boundary}\r\nContent-Transfer-Encoding: quoted-printable\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n<b>x</b>` +
        `\r\n--${boundary}--\r\n`,
    );
    // A configured Message-Id replaces the generated one; no part at all leaves only the closing boundary.
    const bare = composeGoMail({ headers: { 'Message-Id': '<m@x>' }, hostname: 'host' }).toString();
    expect(bare.match(/^Message-Id:/gm)).toHaveLength(1);
    expect(bare).toMatch(/MIME-Version: 1\.0\r\n\r\n\r\n--[0-9a-f]{60}--\r\n$/);
  });

  it('dates in time.RFC1123Z with the local offset', () => {
    expect(rfc1123z(new Date(2026, 0, 2, 3, 4, 5))).toMatch(/^Fri, 02 Jan 2026 03:04:05 [+-]\d{4}$/);
  });
});

describe('the e-mail page escapes values as html/template does', () => {
  it('text: & \' < > " + and NUL; href: unsafe schemes become #ZgotmplZ, bytes outside URL syntax are %-encoded, then attribute-escaped', () => {
    expect(goHtmlEscape('a+b <c> & "d" \'e\'\0')).toBe('a&#43;b &lt;c&gt; &amp; &#34;d&#34; &#39;e&#39;\ufffd');
    expect(goHrefEscape('javascript:alert(1)')).toBe('#ZgotmplZ');
    expect(goHrefEscape('JavaScript:x')).toBe('#ZgotmplZ');
    expect(goHrefEscape('HTTPS://x/a b?q=1+2&r="é"')).toBe('HTTPS://x/a%20b?q=1&#43;2&amp;r=%22%c3%a9%22');
    expect(goHrefEscape('/graph?g0.expr=up%3D1')).toBe('/graph?g0.expr=up%3D1');
    expect(goHrefEscape('')).toBe('');
  });
});
