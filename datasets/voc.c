/* datasets/voc.c — VOC ground truth (segmentation PNGs through pipeline/images/image.h, boxes through
 * libxml2).  See voc.h. */
#include "datasets/voc.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/images/image.h"
#include "pipeline/kc.h"

void voc_init(void) { xmlInitParser(); }

static const xmlNode *child(const xmlNode *n, const char *name)
{
    for (const xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, name)) return c;
    return NULL;
}

/* The text of element n as a real number; -1 with a message when absent or not a number. */
static int node_number(const char *path, const xmlNode *n, const char *what, double *out)
{
    if (!n) return kc_fail("%s: <%s> missing", path, what);
    xmlChar *t = xmlNodeGetContent(n);
    char *end = NULL;
    double v = t ? strtod((const char *)t, &end) : NAN;
    int ok = t && end != (const char *)t && isfinite(v);
    if (ok)
        for (; *end; end++)
            if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') ok = 0;
    if (!ok) {
        kc_fail("%s: <%s> is not a number ('%s')", path, what, t ? (const char *)t : "");
        xmlFree(t);
        return -1;
    }
    xmlFree(t);
    *out = v;
    return 0;
}

/* "1" (white space around allowed) in child element name of o: the VOC flag convention. */
static int flag_set(const xmlNode *o, const char *name)
{
    const xmlNode *n = child(o, name);
    xmlChar *t = n ? xmlNodeGetContent(n) : NULL;
    const char *s = t ? (const char *)t : "";
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    int set = s[0] == '1' && (s[1] == 0 || s[1] == ' ' || s[1] == '\t' || s[1] == '\n' || s[1] == '\r');
    xmlFree(t);
    return set;
}

static int read_annotation(const char *path, voc_box **boxes, char ***names, uint8_t **hard, int *n_boxes,
                           int *width, int *height)
{
    if (hard) *hard = NULL;
    *boxes = NULL;
    *names = NULL;
    *n_boxes = 0;
    *width = *height = 0;
    if (!kc_exists(path)) return kc_fail("%s: annotation file missing", path);
    xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) return kc_fail("%s: not well-formed XML", path);
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || strcmp((const char *)root->name, "annotation")) {
        xmlFreeDoc(doc);
        return kc_fail("%s: root element is not <annotation>", path);
    }
    const xmlNode *size = child(root, "size");
    if (size && child(size, "width") && child(size, "height")) {
        double w, h;
        if (node_number(path, child(size, "width"), "width", &w) < 0 ||
            node_number(path, child(size, "height"), "height", &h) < 0) {
            xmlFreeDoc(doc);
            return -1;
        }
        if (w < 0 || h < 0 || w > 1e6 || h > 1e6 || w != floor(w) || h != floor(h)) {
            xmlFreeDoc(doc);
            return kc_fail("%s: bad <size> %gx%g", path, w, h);
        }
        *width = (int)w;
        *height = (int)h;
    }
    int cap = 0, n = 0;
    voc_box *bx = NULL;
    char **nm = NULL;
    uint8_t *hd = NULL;
    for (const xmlNode *o = root->children; o; o = o->next) {
        if (o->type != XML_ELEMENT_NODE || strcmp((const char *)o->name, "object")) continue;
        const xmlNode *bb = child(o, "bndbox");
        voc_box b;
        int rc = bb ? 0 : kc_fail("%s: object %d has no <bndbox>", path, n + 1);
        if (rc == 0) rc = node_number(path, child(bb, "xmin"), "xmin", &b.xmin);
        if (rc == 0) rc = node_number(path, child(bb, "ymin"), "ymin", &b.ymin);
        if (rc == 0) rc = node_number(path, child(bb, "xmax"), "xmax", &b.xmax);
        if (rc == 0) rc = node_number(path, child(bb, "ymax"), "ymax", &b.ymax);
        if (rc == 0 && (b.xmax < b.xmin || b.ymax < b.ymin))
            rc = kc_fail("%s: object %d has an inverted box (%g,%g)-(%g,%g)", path, n + 1, b.xmin, b.ymin,
                         b.xmax, b.ymax);
        if (rc < 0) {
            for (int i = 0; i < n; i++) free(nm[i]);
            free(nm);
            free(bx);
            free(hd);
            xmlFreeDoc(doc);
            return -1;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            bx = kc_realloc(bx, (size_t)cap * sizeof *bx);
            nm = kc_realloc(nm, (size_t)cap * sizeof *nm);
            hd = kc_realloc(hd, (size_t)cap);
        }
        hd[n] = (uint8_t)(flag_set(o, "difficult") || flag_set(o, "truncated"));
        const xmlNode *name = child(o, "name");
        xmlChar *t = name ? xmlNodeGetContent(name) : NULL;
        nm[n] = kc_strdup(t ? (const char *)t : "");
        xmlFree(t);
        bx[n++] = b;
    }
    xmlFreeDoc(doc);
    *boxes = bx;
    *names = nm;
    *n_boxes = n;
    if (hard) *hard = hd;
    else free(hd);
    return 0;
}

int voc_read_annotation(const char *path, voc_box **boxes, char ***names, int *n_boxes, int *width,
                        int *height)
{
    return read_annotation(path, boxes, names, NULL, n_boxes, width, height);
}

int voc_read_annotation_hard(const char *path, voc_box **boxes, char ***names, uint8_t **hard, int *n_boxes,
                             int *width, int *height)
{
    return read_annotation(path, boxes, names, hard, n_boxes, width, height);
}

static int read_png(const char *path, int *w, int *h, uint8_t **data)
{
    if (!kc_exists(path)) return kc_fail("%s: file missing", path);
    return image_read_png_index(path, w, h, data);
}

int voc_gt_load(const char *root, const char *id, int flags, voc_gt *gt)
{
    memset(gt, 0, sizeof *gt);
    char *jpg = kc_strfmt("%s/JPEGImages/%s.jpg", root, id);
    char *obj = kc_strfmt("%s/SegmentationObject/%s.png", root, id);
    char *cls = kc_strfmt("%s/SegmentationClass/%s.png", root, id);
    char *xml = kc_strfmt("%s/Annotations/%s.xml", root, id);
    int rc = 0, jw = 0, jh = 0, xw = 0, xh = 0;
    if (!kc_exists(jpg) && !kc_exists(obj) && !kc_exists(xml)) {
        rc = kc_fail("%s: id '%s' has no files (no JPEGImages/%s.jpg, SegmentationObject/%s.png or "
                     "Annotations/%s.xml)", root, id, id, id, id);
        goto done;
    }
    if (!(flags & VOC_GT_NO_JPEG)) {
        if (!kc_exists(jpg)) {
            rc = kc_fail("%s: file missing", jpg);
            goto done;
        }
        if ((rc = image_size(jpg, &jw, &jh)) < 0) goto done;
    }
    if ((rc = read_png(obj, &gt->w, &gt->h, &gt->object)) < 0) goto done;
    if (!(flags & VOC_GT_NO_JPEG) && (gt->w != jw || gt->h != jh)) {
        rc = kc_fail("%s: size %dx%d differs from its JPEG %s (%dx%d)", obj, gt->w, gt->h, jpg, jw, jh);
        goto done;
    }
    if (flags & VOC_GT_CLASS) {
        int cw, ch;
        if ((rc = read_png(cls, &cw, &ch, &gt->cls)) < 0) goto done;
        if (cw != gt->w || ch != gt->h) {
            rc = kc_fail("%s: size %dx%d differs from %s (%dx%d)", cls, cw, ch, obj, gt->w, gt->h);
            goto done;
        }
    }
    if ((rc = voc_read_annotation(xml, &gt->boxes, &gt->names, &gt->n_boxes, &xw, &xh)) < 0) goto done;
    if (xw > 0 && xh > 0 && (xw != gt->w || xh != gt->h))
        rc = kc_fail("%s: <size> %dx%d differs from %s (%dx%d)", xml, xw, xh, obj, gt->w, gt->h);
done:
    free(jpg);
    free(obj);
    free(cls);
    free(xml);
    if (rc < 0) voc_gt_free(gt);
    return rc < 0 ? -1 : 0;
}

void voc_gt_free(voc_gt *gt)
{
    free(gt->object);
    free(gt->cls);
    for (int i = 0; i < gt->n_boxes; i++) free(gt->names[i]);
    free(gt->names);
    free(gt->boxes);
    memset(gt, 0, sizeof *gt);
}
