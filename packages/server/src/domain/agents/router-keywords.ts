/**
 * @module The orchestrator router's vocabulary: terms and weights per department.
 * A term is one or more words; a trailing `*` on its last word matches any ending
 * (`invoice*` matches "invoice", "invoices", "invoicing"). Weight 3 = says the department
 * on its own, 2 = strong hint, 1 = weak hint shared with neighbours.
 */
import type { DepartmentSlug } from './catalog.ts';

export type KeywordTable = Readonly<Record<DepartmentSlug, Readonly<Record<string, number>>>>;

export const ROUTER_KEYWORDS: KeywordTable = {
  sales: {
    'lead*': 3, 'prospect*': 3, 'pipeline': 3, 'deal*': 2, 'quote*': 2, 'quotation*': 3, 'upsell*': 3,
    'cold call*': 3, 'crm': 2, 'sales': 3, 'sell*': 2, 'close the deal': 3, 'follow up': 1, 'follow-up': 1,
    'discount*': 1, 'buyer*': 2, 'demo*': 1, 'opportunit*': 2,
  },
  marketing: {
    'campaign*': 3, 'marketing': 3, 'newsletter*': 3, 'seo': 3, 'brand*': 2, 'social media': 3, 'post*': 1,
    'advert*': 3, 'ads': 2, 'audience*': 2, 'landing page*': 3, 'copywrit*': 3, 'slogan*': 3, 'content calendar': 3,
    'press release*': 3, 'engagement': 1,
  },
  finance: {
    'invoice*': 3, 'budget*': 3, 'cash flow': 3, 'cashflow': 3, 'expense*': 2, 'payment*': 2, 'tax*': 2, 'vat': 3,
    'revenue': 1, 'profit*': 2, 'accounting': 3, 'bookkeeping': 3, 'ledger*': 3, 'payroll': 2, 'forecast*': 1,
    'balance sheet*': 3, 'refund*': 1, 'finance*': 3, 'financial*': 3,
  },
  legal: {
    'contract*': 3, 'legal*': 3, 'gdpr': 3, 'compliance': 2, 'clause*': 3, 'nda': 3, 'lawsuit*': 3, 'lawyer*': 3,
    'terms and conditions': 3, 'terms of service': 3, 'liabilit*': 3, 'trademark*': 3, 'privacy policy': 3,
    'regulat*': 2, 'dispute*': 2, 'licens*': 1,
  },
  hr: {
    'hiring': 3, 'hire': 2, 'recruit*': 3, 'candidate*': 3, 'onboarding': 2, 'employee*': 2, 'vacation*': 3,
    'leave': 1, 'holiday*': 1, 'sick': 2, 'salary': 2, 'salaries': 2, 'job description*': 3, 'job offer*': 3,
    'interview*': 2, 'performance review*': 3, 'hr': 3, 'human resources': 3, 'staff': 1, 'team member*': 1,
  },
  operations: {
    'logistic*': 3, 'supplier*': 3, 'inventory': 3, 'stock': 2, 'shipping': 3, 'shipment*': 3, 'delivery': 2,
    'deliveries': 2, 'warehouse*': 3, 'procurement': 3, 'purchase order*': 3, 'vendor*': 2, 'process*': 1,
    'workflow*': 1, 'schedul*': 1, 'operations': 3, 'fulfil*': 3, 'order*': 1,
  },
  analytics: {
    'dashboard*': 3, 'metric*': 3, 'kpi*': 3, 'analytic*': 3, 'analys*': 2, 'report*': 1, 'data': 2, 'dataset*': 3,
    'chart*': 2, 'trend*': 2, 'conversion rate*': 3, 'churn': 2, 'cohort*': 3, 'statistic*': 3, 'sql': 2,
    'a/b test*': 3, 'spreadsheet*': 1,
  },
  strategy: {
    'strateg*': 3, 'competitor*': 3, 'competition': 2, 'market entry': 3, 'expansion': 2, 'roadmap*': 2,
    'positioning': 3, 'swot': 3, 'long term': 2, 'long-term': 2, 'vision': 2, 'business plan*': 3, 'okr*': 2,
    'growth plan*': 3, 'pricing strategy': 3, 'partnership*': 1, 'acquisition*': 2,
  },
  it: {
    'password*': 3, 'login': 2, 'laptop*': 3, 'computer*': 2, 'software': 2, 'server*': 2, 'network*': 2, 'wifi': 3,
    'wi-fi': 3, 'vpn': 3, 'printer*': 3, 'email account*': 3, 'install*': 2, 'bug*': 2, 'crash*': 2, 'backup*': 3,
    'security': 1, 'access': 1, 'it support': 3, 'device*': 2,
  },
  'customer-care': {
    'complain*': 3, 'complaint*': 3, 'customer service': 3, 'support ticket*': 3, 'ticket*': 2, 'unhappy': 2,
    'angry': 2, 'return*': 1, 'refund*': 2, 'broken': 1, 'help desk': 3, 'helpdesk': 3, 'faq*': 3,
    'customer care': 3, 'customer*': 1, 'client*': 1, 'reply to': 1, 'satisfaction': 2, 'warranty': 3,
  },
};
