/* report_page.h — the static HTML/CSS/JS of the report page (report_page.c). */
#ifndef JSMF_REPORT_PAGE_H
#define JSMF_REPORT_PAGE_H
extern const char jsmf_report_head[];
extern const char jsmf_report_script[];
#endif
