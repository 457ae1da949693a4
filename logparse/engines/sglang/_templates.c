/* The fast stage's template scanner in C: the same checks as logparse/engines/sglang/bulk_template.py,
 * one row at a time instead of one numpy pass per step.
 *
 * Why C: numpy runs each step of a template over every candidate row of a block (a gather, a
 * compare, a mask), tens of passes a row; on two cores that was most of the time of `parse` of a
 * long log.  Here each row is read once, left to right, and left as soon as a step fails.
 *
 * Nothing here knows a wording: the templates come from Python (bulk_native.py compiles them from
 * grammars/sglang/runtime.toml through bulk_template.template), as lists of steps.  The checks are
 * bulk_template's, byte for byte (tests/engines/sglang/test_bulk_native.py compares both on every
 * shape and on near misses); where a check reads past a row's end it reads what numpy reads (the
 * next line, the block's zero padding), and a row whose position passes its end fails, as
 * Rows.keep makes it.
 *
 * Buffers in and out are plain bytes-like objects (numpy arrays on the Python side): no numpy
 * headers are needed to build this, only Python's.  The GIL is released while rows are scanned. */

#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE /* memmem */
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { OP_LIT = 0, OP_INT = 1, OP_FLT = 2, OP_BOOL = 3 };
#define MAX_STEPS 48
#define MAX_TEMPLATES 16
#define MAX_WORDS 32
#define MAX_ITEMS 40

typedef struct {
    int op;
    const unsigned char *lit; /* OP_LIT: the text (borrowed from the program's bytes) */
    Py_ssize_t len;
    int col;                  /* the output column of a figure, -1: not kept */
    int check;                /* compare the figure with [lo, hi] */
    int never;                /* a decimal where the field is whole: the row is never proven */
    double lo, hi;
} Step;

typedef struct {
    int n;
    Step steps[MAX_STEPS];
} Template;

typedef struct {
    const unsigned char *d;
    Py_ssize_t size; /* bytes readable (a block and its padding); reads past it give 0 */
} Buf;

static inline unsigned char at(const Buf *b, int64_t i) { return (i >= 0 && i < b->size) ? b->d[i] : 0; }
static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int literal(const Buf *b, int64_t pos, const unsigned char *text, Py_ssize_t len) {
    if (pos < 0) return 0;
    if (pos + len <= b->size) return memcmp(b->d + pos, text, (size_t)len) == 0;
    for (Py_ssize_t k = 0; k < len; k++)
        if (at(b, pos + k) != text[k]) return 0;
    return 1;
}

/* bulk_template.Bytes.number: the digits at pos (at most 16 read) and their value. */
static int number(const Buf *b, int64_t pos, int64_t *value) {
    int n = 0;
    int64_t v = 0;
    while (n < 16 && is_digit(at(b, pos + n))) {
        v = v * 10 + (at(b, pos + n) - '0');
        n++;
    }
    *value = v;
    return n;
}

/* bulk_template.Bytes.shape: 'D' a digit, any other character itself. */
static int shape(const Buf *b, int64_t pos, const char *pattern) {
    for (int k = 0; pattern[k]; k++) {
        unsigned char c = at(b, pos + k);
        if (pattern[k] == 'D' ? !is_digit(c) : c != (unsigned char)pattern[k]) return 0;
    }
    return 1;
}

static int two(const Buf *b, int64_t pos) { return (at(b, pos) - '0') * 10 + (at(b, pos + 1) - '0'); }

static const int MONTH_DAYS[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

/* bulk_template._real_time over the stamp at pos (``YYYY-MM-DD?HH:MM:SS``, digits checked). */
static int real_time(const Buf *b, int64_t pos, int64_t *code) {
    int year = two(b, pos) * 100 + two(b, pos + 2), month = two(b, pos + 5), day = two(b, pos + 8);
    int hour = two(b, pos + 11), minute = two(b, pos + 14), second = two(b, pos + 17);
    if (code) *code = ((((((int64_t)year * 100 + month) * 100 + day) * 100 + hour) * 100 + minute) * 100) + second;
    if (month < 1 || month > 12 || day < 1 || day > MONTH_DAYS[month]) return 0;
    if (hour >= 24 || minute >= 60 || second >= 60 || year < 1) return 0;
    if (month == 2 && day == 29 && !((year % 4 == 0) && ((year % 100 != 0) || (year % 400 == 0)))) return 0;
    return 1;
}

/* ---------------------------------------------------------------- the bracket */

static unsigned char ITEM[256];

/* bulk_template._bracket + _items: the stamp number, where it starts, whether the bracket is bare,
 * and the position of its ']' (returned; -1: not a plain bracket). */
static int64_t bracket(const Buf *b, int64_t pos, int64_t end, int64_t *ts, int64_t *ts_at, int *bare) {
    int64_t code;
    if (!shape(b, pos, "[DDDD-DD-DD DD:DD:DD")) return -1;
    if (!real_time(b, pos + 1, &code)) return -1;
    int milli = at(b, pos + 20) == '.';
    int64_t msv = 0;
    if (milli) {
        unsigned char after = at(b, pos + 24);
        if (!shape(b, pos + 21, "DDD") || !(after == ' ' || after == ']')) return -1;
        msv = 1000 + (at(b, pos + 21) - '0') * 100 + (at(b, pos + 22) - '0') * 10 + (at(b, pos + 23) - '0');
    }
    *ts = code * 10000 + msv;
    *ts_at = pos + 1;
    pos += milli ? 24 : 20;
    if (pos > end) return -1;
    if (at(b, pos) == ']') {
        *bare = 1;
        return pos;
    }
    *bare = 0;
    if (at(b, pos) != ' ') return -1;
    int prev_space = 0;
    for (int k = 0; k <= MAX_ITEMS; k++) {
        unsigned char c = at(b, pos + k);
        if (k && c == ']') {
            if (prev_space) return -1;
            return pos + k <= end ? pos + k : -1;
        }
        int good = k ? (prev_space ? ITEM[c] == 1 : (ITEM[c] > 0 || c == ' ')) : c == ' ';
        if (!good) return -1;
        prev_space = c == ' ';
    }
    return -1;
}

/* ---------------------------------------------------------------- templates */

/* One template at pos; the figures into the row's cells.  1: proven (its position reached end). */
static int run_template(const Buf *b, const Template *t, int64_t pos, int64_t end, int64_t *icells, double *fcells,
                        const int *col_is_float) {
    for (int s = 0; s < t->n; s++) {
        const Step *st = &t->steps[s];
        if (st->op == OP_LIT) {
            if (!literal(b, pos, st->lit, st->len)) return 0;
            pos += st->len;
        } else if (st->op == OP_BOOL) {
            if (literal(b, pos, (const unsigned char *)"True", 4)) pos += 4;
            else if (literal(b, pos, (const unsigned char *)"False", 5)) pos += 5;
            else return 0;
        } else {
            int64_t v;
            int n = number(b, pos, &v);
            double value;
            if (st->op == OP_FLT) {
                int64_t frac;
                int m = number(b, pos + n + 1, &frac);
                if (!(n > 0 && n <= 15 && at(b, pos + n) == '.' && m > 0 && n + m <= 15)) return 0;
                int64_t p = 1;
                for (int k = 0; k < m; k++) p *= 10;
                value = (double)(v * p + frac) / (double)p;
                n = n + 1 + m;
                if (st->never) return 0;
            } else {
                if (!(n > 0 && n <= 15)) return 0;
                value = (double)v;
            }
            if (st->check && !(value >= st->lo && value <= st->hi)) return 0;
            if (st->col >= 0) {
                if (col_is_float[st->col]) fcells[st->col] = value;
                else icells[st->col] = v;
            }
            pos += n;
        }
        if (pos > end) return 0;
    }
    return pos == end;
}

/* ---------------------------------------------------------------- access lines */

typedef struct {
    int n;
    const unsigned char *text[MAX_WORDS];
    Py_ssize_t len[MAX_WORDS];
} Words;

static unsigned char PATH[256], CLIENT[256];

static int64_t run_of(const Buf *b, int64_t pos, const unsigned char *table, int cap) {
    int n = 0;
    while (n <= cap && table[at(b, pos + n)]) n++;
    return (n > 0 && n <= cap) ? n : -1;
}

static int64_t one_of(const Buf *b, int64_t pos, int64_t end, const Words *w, int last) {
    for (int k = 0; k < w->n; k++)
        if (literal(b, pos, w->text[k], w->len[k]) && (!last || pos + w->len[k] == end)) return pos + w->len[k];
    return -1;
}

/* bulk_template.access_rows on one row at its ']'. */
static int access_line(const Buf *b, int64_t pos, int64_t end, const Words *methods, const Words *reasons) {
    int64_t n, v;
    if (!literal(b, pos, (const unsigned char *)"] INFO:     ", 12)) return 0;
    pos += 12;
    if (pos > end || (n = run_of(b, pos, CLIENT, 39)) < 0) return 0;
    pos += n;
    if (pos > end || at(b, pos) != ':') return 0;
    pos += 1;
    n = number(b, pos, &v);
    pos += n;
    if (!(n > 0 && n <= 5) || !literal(b, pos, (const unsigned char *)" - \"", 4)) return 0;
    pos += 4;
    if (pos > end || (pos = one_of(b, pos, end, methods, 0)) < 0 || pos > end) return 0;
    if ((n = run_of(b, pos, PATH, 200)) < 0) return 0;
    pos += n;
    if (pos > end || !literal(b, pos, (const unsigned char *)" HTTP/1.1\" ", 11) || !shape(b, pos + 11, "DDD ")) return 0;
    pos += 15;
    if (pos > end || (pos = one_of(b, pos, end, reasons, 1)) < 0) return 0;
    return pos <= end;
}

/* ---------------------------------------------------------------- reading the program */

static int read_words(PyObject *seq, Words *w) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_WORDS) {
        PyErr_SetString(PyExc_ValueError, "too many words");
        return -1;
    }
    w->n = (int)n;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "words are bytes");
            return -1;
        }
        w->text[k] = (const unsigned char *)PyBytes_AS_STRING(item);
        w->len[k] = PyBytes_GET_SIZE(item);
    }
    return 0;
}

/* A template: a sequence of steps (op, text, col, check, never, lo, hi). */
static int read_template(PyObject *seq, Template *t) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_STEPS) {
        PyErr_SetString(PyExc_ValueError, "too many steps");
        return -1;
    }
    t->n = (int)n;
    for (Py_ssize_t k = 0; k < n; k++) {
        Step *s = &t->steps[k];
        PyObject *lit;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "iSiiidd", &s->op, &lit, &s->col, &s->check, &s->never,
                              &s->lo, &s->hi))
            return -1;
        s->lit = (const unsigned char *)PyBytes_AS_STRING(lit);
        s->len = PyBytes_GET_SIZE(lit);
    }
    return 0;
}

static int read_family(PyObject *obj, Template *out, int *count) {
    PyObject *seq = PySequence_Fast(obj, "a family is a sequence of templates");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (n > MAX_TEMPLATES) {
        PyErr_SetString(PyExc_ValueError, "too many templates");
        rc = -1;
    }
    for (Py_ssize_t k = 0; rc == 0 && k < n; k++) {
        PyObject *steps = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, k), "a template is a sequence of steps");
        rc = steps ? read_template(steps, &out[k]) : -1;
        Py_XDECREF(steps);
    }
    *count = (int)n;
    Py_DECREF(seq);
    return rc;
}

typedef struct {
    Py_buffer view;
    int held;
} Held;

static int hold(PyObject *obj, Held *h, int writable) {
    h->held = 0;
    if (PyObject_GetBuffer(obj, &h->view, writable ? (PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) : PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    h->held = 1;
    return 0;
}

static void release(Held *h, int n) {
    for (int k = 0; k < n; k++)
        if (h[k].held) PyBuffer_Release(&h[k].view);
}

/* ---------------------------------------------------------------- entry points */

/* batch(data, pos, end, decode, prefill, methods, reasons, col_is_float, kind, tmpl, ts, ts_at, icols, fcols)
 *
 * For each row i (message at pos[i], ending at end[i]): kind[i] 1 Decode, 2 Prefill, 3 access, 0 none;
 * tmpl[i] the template of its family that proved it; ts/ts_at its stamp; icols/fcols (row-major,
 * ncols a row) its figures. */
static PyObject *batch(PyObject *self, PyObject *args) {
    PyObject *o[14];
    if (!PyArg_UnpackTuple(args, "batch", 14, 14, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8], &o[9],
                           &o[10], &o[11], &o[12], &o[13]))
        return NULL;
    /* on the heap: two blocks may be scanned at once, in two threads */
    Template *decode = PyMem_Calloc(2 * MAX_TEMPLATES, sizeof(Template)), *prefill = decode + MAX_TEMPLATES;
    if (!decode) return PyErr_NoMemory();
    Words methods, reasons;
    int nd = 0, np_ = 0;
    PyObject *ms = PySequence_Fast(o[5], "methods"), *rs = ms ? PySequence_Fast(o[6], "reasons") : NULL;
    int bad = !ms || !rs || read_family(o[3], decode, &nd) < 0 || read_family(o[4], prefill, &np_) < 0 ||
              read_words(ms, &methods) < 0 || read_words(rs, &reasons) < 0;
    if (!bad && ((nd && (decode[0].n == 0 || decode[0].steps[0].op != OP_LIT || decode[0].steps[0].len < 10)) ||
                 (np_ && (prefill[0].n == 0 || prefill[0].steps[0].op != OP_LIT || prefill[0].steps[0].len < 10)))) {
        PyErr_SetString(PyExc_ValueError, "a family's first template starts with a literal of 10 bytes or more");
        bad = 1;
    }
    if (bad) {
        Py_XDECREF(ms);
        Py_XDECREF(rs);
        PyMem_Free(decode);
        return NULL;
    }
    Held h[9] = {0};
    PyObject *bufs[9] = {o[0], o[1], o[2], o[7], o[8], o[9], o[10], o[11], o[12]};
    int nh = 0;
    for (; nh < 9; nh++)
        if (hold(bufs[nh], &h[nh], nh >= 4) < 0) break;
    PyObject *fcols_obj = o[13];
    Held hf = {0};
    if (nh < 9 || hold(fcols_obj, &hf, 1) < 0) {
        release(h, nh);
        PyMem_Free(decode);
        Py_DECREF(ms);
        Py_DECREF(rs);
        return NULL;
    }
    Buf b = {(const unsigned char *)h[0].view.buf, h[0].view.len};
    const int64_t *pos = h[1].view.buf, *end = h[2].view.buf;
    Py_ssize_t n = h[1].view.len / 8;
    const int8_t *is_float_b = h[3].view.buf;
    Py_ssize_t ncols = h[3].view.len;
    int col_is_float[64];
    int ok = ncols <= 64 && h[2].view.len / 8 == n && h[4].view.len >= n && h[5].view.len >= n &&
             h[6].view.len / 8 >= n && h[7].view.len / 8 >= n && h[8].view.len / 8 >= n * ncols &&
             hf.view.len / 8 >= n * ncols;
    if (!ok) {
        release(h, nh);
        PyBuffer_Release(&hf.view);
        PyMem_Free(decode);
        Py_DECREF(ms);
        Py_DECREF(rs);
        PyErr_SetString(PyExc_ValueError, "batch: buffers of the wrong size");
        return NULL;
    }
    for (Py_ssize_t c = 0; c < ncols; c++) col_is_float[c] = is_float_b[c] != 0;
    int8_t *kind = h[4].view.buf, *tmpl = h[5].view.buf;
    int64_t *ts = h[6].view.buf, *ts_at = h[7].view.buf, *icols = h[8].view.buf;
    double *fcols = hf.view.buf;
    const unsigned char *dk = decode[0].steps[0].lit, *pk = prefill[0].steps[0].lit;

    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int bare = 0;
        int64_t close = bracket(&b, pos[i], end[i], &ts[i], &ts_at[i], &bare);
        kind[i] = 0;
        tmpl[i] = -1;
        if (close < 0) continue;
        int64_t *ic = icols + i * ncols;
        double *fc = fcols + i * ncols;
        if (nd && literal(&b, close, dk, 10)) {
            for (int t = 0; t < nd; t++)
                if (run_template(&b, &decode[t], close, end[i], ic, fc, col_is_float)) {
                    kind[i] = 1;
                    tmpl[i] = (int8_t)t;
                    break;
                }
        } else if (np_ && literal(&b, close, pk, 10)) {
            for (int t = 0; t < np_; t++)
                if (run_template(&b, &prefill[t], close, end[i], ic, fc, col_is_float)) {
                    kind[i] = 2;
                    tmpl[i] = (int8_t)t;
                    break;
                }
        } else if (bare && literal(&b, close, (const unsigned char *)"] INFO", 6)) {
            if (access_line(&b, close, end[i], &methods, &reasons)) kind[i] = 3;
        }
    }
    Py_END_ALLOW_THREADS

    release(h, nh);
    PyBuffer_Release(&hf.view);
    PyMem_Free(decode);
    Py_DECREF(ms);
    Py_DECREF(rs);
    Py_RETURN_NONE;
}

/* headers(data, starts, ends, pattern, rest, real, ok, pid, msg)
 *
 * bulk_template.header_rows: for each line, whether its journal header has the block reference's
 * shape (``pattern``: 'D' a digit; then ``rest`` as it stands; ``real``: its stamp names a real
 * time), then a pid of digits and ``]: ``; the pid and where the message starts. */
static PyObject *headers(PyObject *self, PyObject *args) {
    PyObject *data, *starts, *ends, *okb, *pidb, *msgb;
    const char *pattern;
    const unsigned char *rest;
    Py_ssize_t plen, rlen;
    int real;
    if (!PyArg_ParseTuple(args, "OOOs#y#pOOO", &data, &starts, &ends, &pattern, &plen, &rest, &rlen, &real, &okb,
                          &pidb, &msgb))
        return NULL;
    Held h[6] = {0};
    PyObject *bufs[6] = {data, starts, ends, okb, pidb, msgb};
    int nh = 0;
    for (; nh < 6; nh++)
        if (hold(bufs[nh], &h[nh], nh >= 3) < 0) break;
    if (nh < 6) {
        release(h, nh);
        return NULL;
    }
    Py_ssize_t n = h[1].view.len / 8;
    if (h[2].view.len / 8 != n || h[3].view.len < n || h[4].view.len / 8 < n || h[5].view.len / 8 < n) {
        release(h, nh);
        PyErr_SetString(PyExc_ValueError, "headers: buffers of the wrong size");
        return NULL;
    }
    Buf b = {(const unsigned char *)h[0].view.buf, h[0].view.len};
    const int64_t *st = h[1].view.buf, *en = h[2].view.buf;
    int8_t *ok = h[3].view.buf;
    int64_t *pid = h[4].view.buf, *msg = h[5].view.buf;
    Py_ssize_t gap = plen;

    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t p = st[i], v;
        ok[i] = 0;
        if (!shape(&b, p, pattern) || !literal(&b, p + gap, rest, rlen)) continue;
        if (real && !real_time(&b, p, NULL)) continue;
        p += gap + rlen;
        int k = number(&b, p, &v);
        p += k;
        if (!(k > 0 && k <= 10) || p > en[i] || !literal(&b, p, (const unsigned char *)"]: ", 3)) continue;
        p += 3; /* as header_rows: the last check of the position is before the "]: " */
        ok[i] = 1;
        pid[i] = v;
        msg[i] = p;
    }
    Py_END_ALLOW_THREADS

    release(h, nh);
    Py_RETURN_NONE;
}

/* span_ints(data, starts, ends, out)
 *
 * bulk_export.ExportBlock.pids: the value of each span of 1 to 10 ASCII digits (0 for any other
 * span, an absent one, start -1, included). */
static PyObject *span_ints(PyObject *self, PyObject *args) {
    PyObject *bufs[4];
    if (!PyArg_UnpackTuple(args, "span_ints", 4, 4, &bufs[0], &bufs[1], &bufs[2], &bufs[3])) return NULL;
    Held h[4] = {0};
    int nh = 0;
    for (; nh < 4; nh++)
        if (hold(bufs[nh], &h[nh], nh == 3) < 0) break;
    Py_ssize_t n = nh == 4 ? h[1].view.len / 8 : 0;
    if (nh < 4 || h[2].view.len / 8 != n || h[3].view.len / 8 != n) {
        if (nh == 4) PyErr_SetString(PyExc_ValueError, "span_ints: buffers of the wrong size");
        release(h, nh);
        return NULL;
    }
    Buf b = {(const unsigned char *)h[0].view.buf, h[0].view.len};
    const int64_t *st = h[1].view.buf, *en = h[2].view.buf;
    int64_t *out = h[3].view.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t w = en[i] - st[i], v = 0;
        int ok = st[i] >= 0 && w >= 1 && w <= 10;
        for (int64_t k = 0; ok && k < w; k++) {
            unsigned char c = at(&b, st[i] + k);
            ok = is_digit(c);
            v = v * 10 + (c - '0');
        }
        out[i] = ok ? v : 0;
    }
    Py_END_ALLOW_THREADS
    release(h, nh);
    Py_RETURN_NONE;
}

/* same_spans(data, starts, ends, k, out)
 *
 * bulk_export._same_span: which spans hold the same bytes as span k (absent spans, start -1,
 * equal each other and nothing else). */
static PyObject *same_spans(PyObject *self, PyObject *args) {
    PyObject *bufs[4];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "OOOnO", &bufs[0], &bufs[1], &bufs[2], &k, &bufs[3])) return NULL;
    Held h[4] = {0};
    int nh = 0;
    for (; nh < 4; nh++)
        if (hold(bufs[nh], &h[nh], nh == 3) < 0) break;
    Py_ssize_t n = nh == 4 ? h[1].view.len / 8 : 0;
    if (nh < 4 || h[2].view.len / 8 != n || h[3].view.len < n || k < 0 || k >= n) {
        if (nh == 4) PyErr_SetString(PyExc_ValueError, "same_spans: buffers of the wrong size");
        release(h, nh);
        return NULL;
    }
    const unsigned char *d = h[0].view.buf;
    Py_ssize_t size = h[0].view.len;
    const int64_t *st = h[1].view.buf, *en = h[2].view.buf;
    int8_t *out = h[3].view.buf;
    int64_t ks = st[k], kw = en[k] - st[k];
    int k_ok = ks >= 0 && en[k] <= size;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t w = en[i] - st[i];
        if ((st[i] >= 0) != (ks >= 0) || w != kw) out[i] = 0;
        else if (ks < 0 || kw <= 0) out[i] = 1;
        else out[i] = k_ok && en[i] <= size && memcmp(d + st[i], d + ks, (size_t)kw) == 0;
    }
    Py_END_ALLOW_THREADS
    release(h, nh);
    Py_RETURN_NONE;
}

/* newlines(data): how many newlines a block holds (memchr: bytes.count is a byte at a time). */
static PyObject *newlines(PyObject *self, PyObject *arg) {
    Held h = {0};
    if (hold(arg, &h, 0) < 0) return NULL;
    const char *p = h.view.buf, *stop = p + h.view.len;
    Py_ssize_t n = 0;
    Py_BEGIN_ALLOW_THREADS
    for (const char *nl; (nl = memchr(p, '\n', (size_t)(stop - p))) != NULL; p = nl + 1) n++;
    Py_END_ALLOW_THREADS
    release(&h, 1);
    return PyLong_FromSsize_t(n);
}

/* lines(data, starts, ends)
 *
 * Where each line of a block starts and ends (its newline's offset; the last line ends at the
 * block's end): one per newline plus the last, as bulk_template.Bytes.lines, found with memchr.
 * starts and ends hold as many int64 as the block has newlines plus one. */
static PyObject *lines(PyObject *self, PyObject *args) {
    PyObject *bufs[3];
    if (!PyArg_UnpackTuple(args, "lines", 3, 3, &bufs[0], &bufs[1], &bufs[2])) return NULL;
    Held h[3] = {0};
    int nh = 0;
    for (; nh < 3; nh++)
        if (hold(bufs[nh], &h[nh], nh >= 1) < 0) break;
    if (nh < 3) {
        release(h, nh);
        return NULL;
    }
    const char *d = h[0].view.buf;
    Py_ssize_t size = h[0].view.len, cap = h[1].view.len / 8, n = 0;
    if (h[2].view.len / 8 != cap || cap < 1) {
        release(h, nh);
        PyErr_SetString(PyExc_ValueError, "lines: buffers of the wrong size");
        return NULL;
    }
    int64_t *st = h[1].view.buf, *en = h[2].view.buf;
    Py_BEGIN_ALLOW_THREADS
    const char *p = d, *stop = d + size;
    st[0] = 0;
    while (n + 1 < cap) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        if (!nl) break;
        en[n] = nl - d;
        st[++n] = nl - d + 1;
        p = nl + 1;
    }
    en[n] = size;
    Py_END_ALLOW_THREADS
    release(h, nh);
    return PyLong_FromSsize_t(n + 1);
}

/* entries(block, names, slots, n_once)
 *
 * bulk_export.ExportBlock in one pass over a block of export entries (entries end at a blank line,
 * which belongs to the entry it ends): numpy needs a pass per field over every line's name, here
 * each line is read once.  A line's field is its name (the bytes before the first '=' among its
 * first 32) looked up in ``names``; slots[k] is the watched field that name k is (0 ..
 * len(slots's watched) - 1, the first n_once given at most once in an entry the vectorized path
 * takes, the others fields that must be absent), 255 for a name not watched.  Returns (lines,
 * table): the block's count of lines (newlines plus one) and, as int64 bytes, one row per entry:
 * its first line, where it starts, flags (1: it has a line that is not blank; 2: the vectorized
 * path takes it: no unknown line, each once-field at most once, no other watched field, MESSAGE
 * (slot 0) and _PID (slot 1) there) and for each once-field the (start, end) of its value, the
 * last one where it repeats, (-1, -1) where it is absent. */
#define MAX_WATCHED 32
static int entry_row(int64_t **rows, Py_ssize_t *cap, Py_ssize_t n, int width) {
    if (n < *cap) return 0;
    Py_ssize_t more = *cap ? *cap * 2 : 1024;
    int64_t *grown = realloc(*rows, (size_t)more * (size_t)width * sizeof(int64_t));
    if (!grown) return -1;
    *rows = grown;
    *cap = more;
    return 0;
}

static PyObject *entries(PyObject *self, PyObject *args) {
    PyObject *block, *names_obj;
    const unsigned char *slots;
    Py_ssize_t nslots;
    int n_watched, n_once;
    if (!PyArg_ParseTuple(args, "OOy#ii", &block, &names_obj, &slots, &nslots, &n_watched, &n_once)) return NULL;
    PyObject *names = PySequence_Fast(names_obj, "names");
    if (!names) return NULL;
    Py_ssize_t nn = PySequence_Fast_GET_SIZE(names);
    if (nn > 1024 || nslots != nn || n_watched > MAX_WATCHED || n_once > n_watched || n_once < 2) {
        Py_DECREF(names);
        PyErr_SetString(PyExc_ValueError, "entries: at most 1024 names, a slot each, at most 32 watched");
        return NULL;
    }
    /* the names of each length (1..32), for an exact compare */
    int by_len[33][64];
    int count[33] = {0};
    const unsigned char *texts[1024];
    for (Py_ssize_t k = 0; k < nn; k++) {
        PyObject *name = PySequence_Fast_GET_ITEM(names, k);
        Py_ssize_t len = PyBytes_Check(name) ? PyBytes_GET_SIZE(name) : 0;
        if (len < 1 || len > 32 || count[len] >= 64 || (slots[k] != 255 && slots[k] >= n_watched)) {
            Py_DECREF(names);
            PyErr_SetString(PyExc_ValueError, "entries: a field name is bytes of 1 to 32, its slot a watched one");
            return NULL;
        }
        by_len[len][count[len]++] = (int)k;
        texts[k] = (const unsigned char *)PyBytes_AS_STRING(name);
    }
    Held h = {0};
    if (hold(block, &h, 0) < 0) {
        Py_DECREF(names);
        return NULL;
    }
    const unsigned char *d = h.view.buf;
    int64_t size = h.view.len;
    int width = 3 + 2 * n_once;
    int64_t *rows = NULL, lines = 0;
    Py_ssize_t cap = 0, n = 0;
    int failed = 0;

    Py_BEGIN_ALLOW_THREADS
    int seen[MAX_WATCHED];
    int64_t vs[MAX_WATCHED], ve[MAX_WATCHED];
    int unknown = 0, nonblank = 0;
    int64_t first = 0, entry_start = 0, start = 0;
    for (int k = 0; k < n_watched; k++) seen[k] = 0, vs[k] = ve[k] = -1;
    for (;;) {
        const unsigned char *nl = start < size ? memchr(d + start, '\n', (size_t)(size - start)) : NULL;
        int64_t end = nl ? (int64_t)(nl - d) : size;
        if (start != end) {
            nonblank = 1;
            int64_t limit = start + 32 < size ? start + 32 : size;
            const unsigned char *eq = memchr(d + start, '=', (size_t)(limit - start));
            int64_t klen = eq ? (int64_t)(eq - d) - start : 33;
            int id = -1;
            if (eq && start + klen < end && klen > 0)
                for (int c = 0; c < count[klen]; c++)
                    if (memcmp(d + start, texts[by_len[klen][c]], (size_t)klen) == 0) {
                        id = by_len[klen][c];
                        break;
                    }
            if (id < 0) unknown = 1;
            else if (slots[id] != 255) {
                int k = slots[id];
                seen[k]++;
                vs[k] = start + klen + 1;
                ve[k] = end;
            }
        }
        lines++;
        if (start == end || !nl) { /* a blank line ends its entry; the block's end ends the last one */
            if (entry_row(&rows, &cap, n, width) < 0) {
                failed = 1;
                break;
            }
            int simple = !unknown && seen[0] == 1 && seen[1] == 1;
            for (int k = 0; k < n_watched; k++) simple &= k < n_once ? seen[k] <= 1 : seen[k] == 0;
            int64_t *row = rows + (size_t)n * (size_t)width;
            row[0] = first;
            row[1] = entry_start;
            row[2] = nonblank | (simple << 1);
            for (int k = 0; k < n_once; k++) row[3 + 2 * k] = vs[k], row[4 + 2 * k] = ve[k];
            n++;
            for (int k = 0; k < n_watched; k++) seen[k] = 0, vs[k] = ve[k] = -1;
            unknown = nonblank = 0;
            first = lines;
            entry_start = end + 1;
        }
        if (!nl) break;
        start = end + 1;
    }
    Py_END_ALLOW_THREADS

    release(&h, 1);
    Py_DECREF(names);
    if (failed) {
        free(rows);
        return PyErr_NoMemory();
    }
    PyObject *table = PyBytes_FromStringAndSize((const char *)rows, (Py_ssize_t)((size_t)n * (size_t)width * sizeof(int64_t)));
    free(rows);
    if (!table) return NULL;
    PyObject *out = Py_BuildValue("(LN)", (long long)lines, table);
    return out;
}

/* Where the last ``"MESSAGE":`` of [s, e) starts, or -1: found from the end, as MESSAGE is mostly
 * the last field; the last, as a JSON reader keeps a repeated key's last value (the record path's
 * json.loads does). */
static int64_t last_key(const unsigned char *d, int64_t s, int64_t e) {
    int64_t to = e;
    while (to - s >= 10) {
        const unsigned char *m = memrchr(d + s + 1, 'M', (size_t)(to - s - 1));
        if (!m) return -1;
        int64_t at = (int64_t)(m - d) - 1;
        if (at + 10 <= e && memcmp(d + at, "\"MESSAGE\":", 10) == 0) return at;
        to = at + 1;
    }
    return -1;
}

/* The first ``"_PID":`` within [s, e), found by its 'P' (journalctl's keys hold few: memmem's setup
 * costs more than the two or three candidates it checks). */
static int64_t pid_key(const unsigned char *d, int64_t s, int64_t e) {
    if (e - s < 7) return -1;
    const unsigned char *p = d + s + 2, *last = d + e - 5;
    while (p <= last) {
        const unsigned char *m = memchr(p, 'P', (size_t)(last - p + 1));
        if (!m) return -1;
        if (memcmp(m - 2, "\"_PID\":", 7) == 0) return (int64_t)(m - 2 - d);
        p = m + 1;
    }
    return -1;
}

/* The JSON string at p (its opening quote read) up to its closing quote, copied to out with its
 * escapes \" \\ \/ decoded; returns where the closing quote is, -1 where the string holds another
 * escape or does not end before e.  A run without a backslash is copied whole (memchr, memcpy). */
static int64_t plain_string(const unsigned char *d, int64_t p, int64_t e, unsigned char *out, int64_t *w) {
    while (p < e) {
        const unsigned char *q = memchr(d + p, '"', (size_t)(e - p));
        if (!q) return -1;
        const unsigned char *bs = memchr(d + p, '\\', (size_t)(q - d - p));
        int64_t stop = bs ? (int64_t)(bs - d) : (int64_t)(q - d);
        memcpy(out + *w, d + p, (size_t)(stop - p));
        *w += stop - p;
        if (!bs) return stop;
        unsigned char x = stop + 1 < e ? d[stop + 1] : 0;
        if (x != '"' && x != '\\' && x != '/') return -1;
        out[(*w)++] = x;
        p = stop + 2;
    }
    return -1;
}

/* json(data, starts, ends, ok, pid, msg, msg_end) -> bytes
 *
 * The MESSAGE and _PID of ``-o json`` lines: the string after the last ``"MESSAGE":`` (then
 * ``"`` or `` "``) up to its closing quote, copied into the bytes returned with its escapes
 * ``\"``, ``\\`` and ``\/`` decoded, each message followed by a newline (msg/msg_end: where it
 * lies there); the digits of the first ``"_PID":``, written ``"_PID": "N"``.  ok[i] is 0 wherever
 * either is not so plain (another escape: a control character, a \u sequence; a MESSAGE that is no
 * string): the line is left to polars and the record path, which read it as they always did.
 * Inside a string a key's quotes are escaped, so ``"MESSAGE":`` is always a key; journalctl writes
 * each key once. */
static PyObject *json(PyObject *self, PyObject *args) {
    PyObject *o[7];
    if (!PyArg_UnpackTuple(args, "json", 7, 7, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6])) return NULL;
    Held h[7] = {0};
    int nh = 0;
    for (; nh < 7; nh++)
        if (hold(o[nh], &h[nh], nh >= 3) < 0) break;
    if (nh < 7) {
        release(h, nh);
        return NULL;
    }
    Py_ssize_t n = h[1].view.len / 8;
    if (h[2].view.len / 8 != n || h[3].view.len < n || h[4].view.len / 8 < n || h[5].view.len / 8 < n ||
        h[6].view.len / 8 < n) {
        release(h, nh);
        PyErr_SetString(PyExc_ValueError, "json: buffers of the wrong size");
        return NULL;
    }
    /* a message and its newline are never longer than its line and the line's newline */
    PyObject *result = PyBytes_FromStringAndSize(NULL, h[0].view.len + 1);
    if (!result) {
        release(h, nh);
        return NULL;
    }
    const unsigned char *d = h[0].view.buf;
    const int64_t *st = h[1].view.buf, *en = h[2].view.buf;
    int8_t *ok = h[3].view.buf;
    int64_t *pid = h[4].view.buf, *ms = h[5].view.buf, *me = h[6].view.buf;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    int64_t used = 0;

    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        ok[i] = 0;
        int64_t s = st[i], e = en[i];
        int64_t key = last_key(d, s, e);
        if (key < 0) continue;
        int64_t at = key + 10;
        if (at < e && d[at] == '"') at += 1;
        else if (at + 1 < e && d[at] == ' ' && d[at + 1] == '"') at += 2;
        else continue;
        int64_t w = used;
        int64_t p = plain_string(d, at, e, out, &w);
        if (p < 0) continue;
        /* the pid's key among the other fields: before MESSAGE's, else after its string */
        int64_t pk = pid_key(d, s, key);
        if (pk < 0) pk = pid_key(d, p, e);
        if (pk < 0) continue;
        int64_t q = pk + 7;
        while (q < e && d[q] == ' ') q++;
        if (q >= e || d[q] != '"') continue;
        q++;
        int64_t v = 0;
        int digits = 0;
        while (q + digits < e && is_digit(d[q + digits]) && digits < 18) {
            v = v * 10 + (d[q + digits] - '0');
            digits++;
        }
        if (digits == 0 || q + digits >= e || d[q + digits] != '"') continue;
        ok[i] = 1;
        pid[i] = v;
        ms[i] = used;
        me[i] = w;
        out[w++] = '\n'; /* messages apart, as lines are: a check past a message's end reads no other */
        used = w;
    }
    Py_END_ALLOW_THREADS

    release(h, nh);
    if (_PyBytes_Resize(&result, (Py_ssize_t)used) < 0) return NULL;
    return result;
}

static PyMethodDef METHODS[] = {
    {"batch", batch, METH_VARARGS, "Prove batch and access rows (see the module's source)."},
    {"span_ints", span_ints, METH_VARARGS, "The value of each span of 1 to 10 digits (see the module's source)."},
    {"same_spans", same_spans, METH_VARARGS, "Which spans hold the same bytes as one (see the module's source)."},
    {"newlines", newlines, METH_O, "How many newlines a block holds."},
    {"lines", lines, METH_VARARGS, "Where each line of a block starts and ends (see the module's source)."},
    {"headers", headers, METH_VARARGS, "Prove short-iso journal headers (see the module's source)."},
    {"json", json, METH_VARARGS, "MESSAGE and _PID of -o json lines (see the module's source)."},
    {"entries", entries, METH_VARARGS, "The entries of a block of export entries (see the module's source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_templates", "The fast stage's template scanner.", -1,
                                    METHODS};

PyMODINIT_FUNC PyInit__templates(void) {
    const char *words = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";
    for (const char *c = words; *c; c++) ITEM[(unsigned char)*c] = 1;
    for (const char *c = "0123456789.-"; *c; c++) ITEM[(unsigned char)*c] = 2;
    for (const char *c = "abcdefghijklmnopqrstuvwxyz0123456789/.-?&%"; *c; c++) PATH[(unsigned char)*c] = 1;
    for (const char *c = "0123456789."; *c; c++) CLIENT[(unsigned char)*c] = 1;
    return PyModule_Create(&MODULE);
}
